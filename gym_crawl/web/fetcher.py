"""A polite HTTP fetcher: robots.txt, per-host delays, one connection per host, caps, scope and trap guards.

The policy is a :class:`~gym_crawl.web.policy.FetchPolicy`, the outcome a
:class:`~gym_crawl.web.result.FetchResult` (both importable from here too).

:class:`PoliteFetcher` fetches one URL at a time (``fetch`` blocks and sleeps as politeness requires) and
never raises for network or HTTP problems: the :class:`FetchResult` names them in ``error``. Every HTTP
request/response pair (redirect hops, retries and robots.txt fetches included) is an :class:`Exchange`,
handed to an optional recorder (:class:`~gym_crawl.web.warc_io.WarcRecorder` writes them to WARC).

What the fetcher does, in order, for ``fetch(url)``:

1. **canonical URL** (:func:`gym_crawl.web.urls.canonical_url`); a URL that is not ``http(s)`` with a host
   is ``"out-of-scope"``;
2. **scope**: ``allowed_hosts`` / ``allowed_domains`` and the ``allow_patterns`` / ``deny_patterns``
   regular expressions → ``"out-of-scope"``;
3. **trap guards** → ``"trap:url-length"``, ``"trap:path-depth"``, ``"trap:query-params"``,
   ``"trap:repeated-segment"``, ``"trap:pattern"`` (too many pages whose URL differs only in its digits,
   as calendars and session ids do), and the per-host page cap → ``"host-cap"``;
4. **robots.txt** of the origin, fetched once and cached for ``robots_ttl`` (an unreachable one is asked
   again after ``robots_retry``), parsed by ``protego``: a disallowed URL is
   ``"robots"``. As Google documents it: a 2xx robots.txt is obeyed, a 4xx one (except 429) allows
   everything, a 429/5xx, a timeout or a connection error disallows the whole origin; at most
   :attr:`FetchPolicy.robots_max_bytes` bytes are read and up to 5 redirects followed (more: allow all;
   a redirect out of the crawl's scope is not followed and disallows the origin). Anything short of a complete,
   successful body — a stall past the read timeout, a reset or close mid-body, fewer bytes than its
   ``Content-Length``, a body that does not decode — is *unreachable* too (RFC 9309): disallow, ask again
   later; :meth:`PoliteFetcher.robots` names the reason (:data:`ROBOTS_REASONS`).
   ``Crawl-delay`` (and ``Request-rate``) raise the origin's delay to ``max(delay, crawl-delay)``;
5. **politeness**: requests to one origin are serialised (one connection, a urllib3 pool of size 1) and
   start at least ``delay`` seconds after the previous response to that origin was read; all requests
   together start at most ``rate`` per second;
6. **the request**, with connect/read timeouts and a total time limit; the body is streamed and reading
   stops past ``max_bytes`` (→ ``"too-large"``) or when the content type is not allowed (→
   ``"content-type"``); ``429`` and ``503`` replies and connection errors are retried with exponential
   backoff, waiting ``Retry-After`` (seconds or an HTTP date, capped at ``max_retry_after``) when given;
7. **redirects** are followed by the fetcher itself, so every hop is recorded and checked by steps 1–4
   (a redirect into a disallowed path is never requested): more than ``max_redirects`` hops →
   ``"redirect-limit"``, a URL seen twice in one chain → ``"redirect-loop"``.

A page is a ``200`` reply with an allowed content type (a missing ``Content-Type`` is sniffed from the
body's first bytes); any other final status is the error ``"http-<code>"``. Network failures are
``"timeout"`` (connect or read timeout, or the total time limit) and ``"connect"`` (refused, reset,
unresolvable, TLS, or a malformed response: a broken status line or chunk size, a body shorter than its
``Content-Length``); a compressed body that does not decode is ``"decode"`` (not retried: the server's bytes
are wrong, not the network).

A *host* here is an origin (scheme, host and port), the unit robots.txt applies to. The HTTP client is
``urllib3``: its ``HTTPConnectionPool(maxsize=1, block=True)`` is exactly "one connection per host", it
streams bodies with ``preload_content=False`` and leaves redirects and retries to the caller
(``redirect=False, retries=False``) — ``requests`` wraps the same library and would only add a second
redirect/retry layer to switch off.
"""
from __future__ import annotations

import email.utils
import http.client
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

from gym_crawl.registry import install_command
from gym_crawl.web.policy import (
    ROBOTS_TOKEN,
    FetchPolicy,
    default_user_agent,
    in_scope,
    trap_reason,
    url_pattern,
)
from gym_crawl.web.result import (
    FETCH_ERRORS,
    Exchange,
    FetchResult,
    Recorder,
    header_text,
    looks_like_html,
    parse_content_type,
    sniff_charset,
)
from gym_crawl.web.transport import SLICE, Budget, CancelFlag, ContentDecoder, DecodeError, bounded, connection_classes
from gym_crawl.web.urls import MAX_URL_CHARS, canonical_url

# FetchPolicy, FetchResult, Exchange ... are defined in policy.py / result.py and importable from here too
__all__ = [
    "FETCH_ERRORS",
    "ROBOTS_TOKEN",
    "Exchange",
    "FetchPolicy",
    "FetchResult",
    "PoliteFetcher",
    "ROBOTS_REASONS",
    "Recorder",
    "default_user_agent",
    "retry_after_seconds",
    "url_pattern",
]

DECODED_CODINGS = frozenset({"gzip", "x-gzip", "deflate", "identity"})
"""``Content-Encoding`` values the fetcher undoes (it asks for ``gzip, deflate``); a reply in any other coding
(``br``, ``zstd``, ``bzip2``, an unknown one) is the error ``"content-encoding"`` and its body is not read."""
CHUNK = 16384
"""Bytes read from a response body per read; a capped body holds at most ``max_bytes + CHUNK`` bytes."""
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
RETRY_STATUSES = frozenset({429, 503})
ROBOTS_MAX_REDIRECTS = 5
ROBOTS_REASONS = ("parsed", "unavailable", "ignored", "out-of-scope", "unreachable:timeout", "unreachable:connect",
                  "unreachable:disconnect", "unreachable:decode", "unreachable:http-<code>")
"""Why an origin's robots.txt rules are what they are: ``"parsed"`` (a complete 2xx file, obeyed),
``"unavailable"`` (4xx, too many redirects: allow all), ``"ignored"`` (the policy does not obey robots.txt),
``"out-of-scope"`` (redirected where the crawl may not go: disallow all) and ``"unreachable:<why>"`` (disallow
all, asked again after ``robots_retry``): no reply in time (``timeout``), no connection (``connect``), a body
cut off by a reset, a close or a stall past the read timeout before its end (``disconnect``; a stall is
``timeout``), a body that does not decode (``decode``), a 429 or 5xx reply (``http-503`` ...)."""
_DELTA_SECONDS = re.compile(r"[0-9]{1,12}")  # ASCII digits only: str.isdigit() also accepts "²"


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: delta seconds or an HTTP date; ``None`` when absent or
    unparseable; never negative."""
    if value is None:
        return None
    value = value.strip()
    if _DELTA_SECONDS.fullmatch(value):
        return float(value)
    if not value.isascii():
        return None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0.0, (when - (now or datetime.now(timezone.utc))).total_seconds())


def _origin(url: str) -> str:
    p = urlsplit(url)
    return f"{p.scheme}://{p.netloc}"


class _Host:
    """Politeness state of one origin."""

    def __init__(self, origin: str, delay: float):
        self.origin = origin
        self.delay = delay
        self.next_time = float("-inf")
        self.lock = threading.RLock()
        self.pool: Any = None
        self.robots: Any = None  # a protego.Protego, or True (allow all) / False (disallow all)
        self.robots_text: str | None = None  # the text protego parsed
        self.robots_reason = ""  # why the rules are what they are (see ROBOTS_REASONS)
        self.robots_expires = float("inf")
        self.pages = 0
        self.patterns: Counter[str] = Counter()


class _Run:
    """The time limit of one ``fetch`` / ``check``: ``deadline`` (on the fetcher's clock) is set when its first
    request starts, ``max_time`` later."""

    __slots__ = ("deadline",)

    def __init__(self) -> None:
        self.deadline: float | None = None


class _CancelledFetch(Exception):
    """Raised inside the fetcher when :meth:`PoliteFetcher.cancel` stopped a fetch."""


class PoliteFetcher:
    """Fetches URLs one at a time under a :class:`FetchPolicy` (see the module docstring).

    :param policy: the politeness/scope policy; default ``FetchPolicy()``.
    :param recorder: receives every :class:`Exchange` and :class:`FetchResult` (e.g. a ``WarcRecorder``);
        default none.
    :param clock: monotonic seconds (default ``time.monotonic``); :param sleep: waits seconds (default: a
        sleep that :meth:`cancel` ends early) — injectable so tests can run politeness on a fake clock.

    Thread-safe: requests to one origin are serialised by a per-origin lock, so several threads may share a
    fetcher without ever opening two connections to one origin. Use it as a context manager or call
    :meth:`close` to close its connections. :meth:`cancel` (from another thread or a signal handler) ends
    every fetch in progress within :data:`~gym_crawl.web.transport.SLICE` seconds.
    """

    def __init__(self, policy: FetchPolicy | None = None, *, recorder: Recorder | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] | None = None):
        try:
            import urllib3  # noqa: F401
        except ImportError:  # pragma: no cover - urllib3 comes with the web extra
            raise ImportError(f"the live fetcher needs urllib3: {install_command('web')}") from None
        if policy is not None and not isinstance(policy, FetchPolicy):
            raise TypeError(f"policy must be a FetchPolicy, got {type(policy).__name__}")
        self.policy = policy or FetchPolicy()
        self.recorder = recorder
        self._clock = clock
        self._cancel = CancelFlag()
        self._hold = CancelFlag()  # no new page request goes on the wire (hold_pages)
        self._sleep: Callable[[float], Any] = sleep if sleep is not None else self._cancel.wait
        self._sleep_given = sleep is not None
        self._hosts: dict[str, _Host] = {}
        self._hosts_lock = threading.Lock()
        self._rate_lock = threading.Lock()
        self._next_global = float("-inf")
        self._closed = False

    # ------------------------------------------------------------------ public API
    def check(self, url: str) -> str | None:
        """Why :meth:`fetch` would refuse ``url`` before requesting it (``"out-of-scope"``, ``"trap:..."``,
        ``"host-cap"``, ``"robots"``; ``"cancelled"`` after :meth:`cancel`), or ``None``. May fetch the
        origin's robots.txt (when not cached)."""
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, got {type(url).__name__}")
        try:
            reason = self._refusal(url, None, [], _Run())
        except _CancelledFetch:
            return "cancelled"
        if self.recorder is not None:
            self.recorder.flush()
        return reason

    def fetch(self, url: str) -> FetchResult:
        """Fetch ``url`` politely (blocking); never raises for network or HTTP problems (see the module
        docstring for the ``error`` values). Redirects are followed and every hop is checked and recorded.
        A fetch ended by :meth:`cancel` has the error ``"cancelled"`` and its result is not recorded."""
        if self._closed:
            raise RuntimeError("PoliteFetcher is closed")
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, got {type(url).__name__}")
        t0 = self._clock()
        started = _utc_now()
        exchanges: list[Exchange] = []
        chain: list[tuple[str, int]] = []
        run = _Run()
        try:
            canon = canonical_url(url) if len(url) <= MAX_URL_CHARS else None
            reason = self._refusal(url, canon, exchanges, run)
            if reason is not None:
                return self._finish(url, None, None, None, reason, chain, started, t0, exchanges)
            assert canon is not None  # _refusal refuses a URL without a canonical form
            current: str = canon
            seen = {current}
            while True:
                host = self._host(current)
                with host.lock:
                    host.pages += 1
                    host.patterns[url_pattern(current)] += 1
                ex = self._exchange(host, current, "page", exchanges, run, held=self._hold)
                if ex.status is None:
                    return self._finish(url, current, None, ex, ex.error, chain, started, t0, exchanges)
                location = header_text(ex.header("location"))
                if ex.status in REDIRECT_STATUSES and location:
                    chain.append((current, ex.status))
                    nxt = canonical_url(location, base=current) if len(location) <= MAX_URL_CHARS else None
                    err: str | None
                    if nxt is None:
                        err = "trap:url-length" if len(location) > MAX_URL_CHARS else "out-of-scope"
                    elif nxt in seen:
                        err = "redirect-loop"
                    elif len(chain) > self.policy.max_redirects:
                        err = "redirect-limit"
                    else:
                        err = self._refusal(nxt, nxt, exchanges, run)
                    if err is not None or nxt is None:
                        return self._finish(url, current, ex.status, ex, err, chain, started, t0, exchanges)
                    seen.add(nxt)
                    current = nxt
                    continue
                return self._finish(url, current, ex.status, ex, ex.error, chain, started, t0, exchanges)
        except _CancelledFetch:
            return self._finish(url, None, None, None, "cancelled", chain, started, t0, exchanges)

    def cancel(self) -> None:
        """Cancel: every fetch in progress ends within :data:`~gym_crawl.web.transport.SLICE` seconds with the
        error ``"cancelled"`` (its result is not recorded; the exchanges already made are), and every later
        ``fetch`` and ``check`` answers ``"cancelled"`` at once. Safe to call from a signal handler or another
        thread; :meth:`close` still closes the connections."""
        self._cancel.set()

    def hold_pages(self) -> None:
        """No new page request goes on the wire: a page fetch still waiting for its turn (its host's delay, the
        global rate, a redirect hop or retry not yet sent) ends at once with the error ``"cancelled"`` (not
        recorded), while a request already sent completes as usual and robots.txt reads are not held. What a
        crawl does with the pages in flight when its last step is taken. Safe from another thread."""
        self._hold.set()

    @property
    def cancelled(self) -> bool:
        """Whether :meth:`cancel` was called."""
        return self._cancel.is_set()

    def robots(self, url: str) -> tuple[str, str | None, list[Exchange], str]:
        """The robots.txt rules in force for ``url``'s origin, reading the file (politely, blocking) when it is
        not cached: ``(kind, text, exchanges, reason)`` — ``kind`` ``"allow"`` (no usable file: 4xx, or the
        fetcher ignores robots.txt), ``"disallow"`` (unreachable or incomplete, 429/5xx, or redirected out of
        scope) or ``"parse"`` (``text`` is the complete file protego parsed); ``exchanges`` the requests this
        call made (none when cached); ``reason`` one of :data:`ROBOTS_REASONS` (``"unreachable:timeout"`` ...)."""
        canon = canonical_url(url)
        if canon is None:
            raise ValueError(f"url {url!r} is not an http(s) URL with a host")
        exchanges: list[Exchange] = []
        if not self.policy.obey_robots:
            return "allow", None, exchanges, "ignored"
        host = self._host(canon)
        self._robots_allow(host, canon, exchanges)
        with host.lock:
            rp, text, reason = host.robots, host.robots_text, host.robots_reason
        if rp is True or rp is False:
            return ("allow" if rp else "disallow"), None, exchanges, reason
        return "parse", text, exchanges, reason

    def crawl_delay(self, url: str) -> float:
        """The delay (seconds) in force for ``url``'s origin: ``policy.delay`` raised by its robots.txt
        ``Crawl-delay`` once that has been read."""
        canon = canonical_url(url)
        if canon is None:
            raise ValueError(f"url {url!r} is not an http(s) URL with a host")
        return self._host(canon).delay

    def close(self) -> None:
        """Close every connection (idempotent); later ``fetch`` calls raise ``RuntimeError``."""
        self._closed = True
        with self._hosts_lock:
            for h in self._hosts.values():
                if h.pool is not None:
                    h.pool.close()
                    h.pool = None
        if self.recorder is not None:
            self.recorder.flush()

    def __enter__(self) -> PoliteFetcher:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ refusal checks
    def _refusal(self, url: str, canon: str | None, exchanges: list[Exchange], run: _Run) -> str | None:
        """Why ``url`` (canonical form ``canon``, or ``None`` to compute it) is not requested, or ``None``."""
        if self._cancel.is_set():
            raise _CancelledFetch
        if len(url) > MAX_URL_CHARS:  # refused before anything else reads it
            return "trap:url-length"
        if canon is None:
            canon = canonical_url(url)
        if canon is None or not in_scope(self.policy, canon):
            return "out-of-scope"
        trap = trap_reason(self.policy, canon)
        if trap is not None:
            return trap
        host = self._host(canon)
        p = self.policy
        if p.max_pages_per_pattern is not None and host.patterns[url_pattern(canon)] >= p.max_pages_per_pattern:
            return "trap:pattern"
        if p.max_pages_per_host is not None and host.pages >= p.max_pages_per_host:
            return "host-cap"
        if p.obey_robots and not self._robots_allow(host, canon, exchanges, run):
            return "robots"
        return None

    # ------------------------------------------------------------------ robots.txt
    def _robots_allow(self, host: _Host, canon: str, exchanges: list[Exchange], run: _Run | None = None) -> bool:
        run = run if run is not None else _Run()
        with host.lock:
            if host.robots is None or self._clock() >= host.robots_expires:
                host.robots, host.robots_reason = self._read_robots(host, exchanges, run)
                transient = host.robots_reason.startswith("unreachable:")
                p = self.policy
                host.robots_expires = self._clock() + (p.robots_retry if transient else p.robots_ttl)
            rp = host.robots
        if rp is True or rp is False:
            return rp
        return bool(rp.can_fetch(canon, self.policy.agent))

    def _read_robots(self, host: _Host, exchanges: list[Exchange], run: _Run) -> tuple[Any, str]:
        """``(rules, reason)``: a ``protego.Protego``, or ``True`` (allow all) / ``False`` (disallow all), and
        why (:data:`ROBOTS_REASONS`). Anything short of a complete, successful body is *unreachable* (RFC 9309
        §2.3.1.4): a timeout or a connection error before or during the body, a body shorter than its
        ``Content-Length`` or cut off mid-chunk, a content coding that does not decode, a 429 or 5xx reply —
        the origin is disallowed and asked again after ``robots_retry``."""
        try:
            import protego  # noqa: F401 - said now, before a request, when the web extra is missing
        except ImportError:  # pragma: no cover - protego comes with the web extra
            raise ImportError(f"robots.txt parsing needs protego: {install_command('web')}") from None
        url = host.origin + "/robots.txt"
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            h = self._host(url)
            ex = self._exchange(h, url, "robots", exchanges, run)
            if ex.error == "cancelled":
                raise _CancelledFetch
            unreachable = _robots_unreachable(ex)
            if unreachable is not None:
                return False, "unreachable:" + unreachable  # disallow all, for now
            assert ex.status is not None
            location = header_text(ex.header("location"))
            if ex.status in REDIRECT_STATUSES and location:
                nxt = canonical_url(location, base=url) if len(location) <= MAX_URL_CHARS else None
                if nxt is None:
                    return True, "unavailable"  # an unusable Location: as no robots.txt
                if not in_scope(self.policy, nxt) or trap_reason(self.policy, nxt) is not None:
                    return False, "out-of-scope"  # its rules live where the crawl may not go: disallow, not guess
                url = nxt
                continue
            if ex.status >= 400:
                return True, "unavailable"
            if 200 <= ex.status < 300:
                text = ex.body[:self.policy.robots_max_bytes].decode("utf-8", errors="replace")
                old = host.delay
                rp = self._parse_robots(host, text)
                if h is host:  # the robots.txt response itself starts the new wait
                    host.next_time += host.delay - old
                return rp, "parsed"
            return True, "unavailable"  # 1xx / other 3xx: as Google, treat as no robots.txt
        return True, "unavailable"  # too many redirects: as a 404

    def _parse_robots(self, host: _Host, text: str) -> Any:
        """``text`` parsed as ``host``'s robots.txt; its ``Crawl-delay`` / ``Request-rate`` raise the host's delay
        (up to ``max_crawl_delay``)."""
        from protego import Protego

        rp = Protego.parse(text)
        host.robots_text = text
        cd = rp.crawl_delay(self.policy.agent)
        rr = rp.request_rate(self.policy.agent)
        extra = max(float(cd or 0.0), rr.seconds / rr.requests if rr and rr.requests else 0.0)
        host.delay = max(self.policy.delay, min(extra, self.policy.max_crawl_delay))
        return rp

    def remember_robots(self, url: str, kind: str, text: str | None, reason: str = "") -> None:
        """Take ``url``'s origin's robots.txt rules as read before — ``(kind, text, reason)`` as :meth:`robots`
        returned them, e.g. from the WARC of a crawl being resumed — instead of asking for the file again: cached
        for ``robots_ttl`` from now (``robots_retry`` when ``reason`` says it was unreachable)."""
        canon = canonical_url(url)
        if canon is None:
            raise ValueError(f"url {url!r} is not an http(s) URL with a host")
        if kind not in ("allow", "disallow", "parse"):
            raise ValueError(f"robots kind must be 'allow', 'disallow' or 'parse', got {kind!r}")
        host = self._host(canon)
        with host.lock:
            host.robots = self._parse_robots(host, text or "") if kind == "parse" else kind == "allow"
            host.robots_reason = reason or ("parsed" if kind == "parse" else "")
            p = self.policy
            host.robots_expires = self._clock() + (p.robots_retry if reason.startswith("unreachable:") else
                                                   p.robots_ttl)

    # ------------------------------------------------------------------ politeness and HTTP
    def _host(self, canon: str) -> _Host:
        origin = _origin(canon)
        with self._hosts_lock:
            h = self._hosts.get(origin)
            if h is None:
                h = self._hosts[origin] = _Host(origin, self.policy.delay)
            return h

    def _pool(self, host: _Host) -> Any:
        if host.pool is None:
            import urllib3

            p = urlsplit(host.origin)
            if p.hostname is None:
                raise ValueError(f"origin {host.origin!r} has no host name")
            plain, tls = connection_classes()
            cls = urllib3.HTTPSConnectionPool if p.scheme == "https" else urllib3.HTTPConnectionPool
            pool = cls(p.hostname, p.port, maxsize=1, block=True, retries=False,
                       timeout=urllib3.Timeout(connect=self.policy.connect_timeout, read=self.policy.read_timeout))
            pool.ConnectionCls = tls if p.scheme == "https" else plain
            host.pool = pool
        return host.pool

    def _wait_turn(self, host: _Host, run: _Run, held: CancelFlag | None = None) -> bool:
        """Sleep until ``host`` may be requested and the global rate allows a request start; ``False`` (without
        waiting) when that moment is past the fetch's deadline. ``held`` (a page request): once it is set, the
        request is not made (``_CancelledFetch``), and the default sleep ends within a slice of its setting."""
        while True:
            if self._cancel.is_set() or (held is not None and held.is_set()):
                raise _CancelledFetch
            with self._rate_lock:
                now = self._clock()
                wait = max(host.next_time, self._next_global) - now
                if wait <= 0:
                    if self.policy.rate is not None:
                        self._next_global = now + 1.0 / self.policy.rate
                    return True
            if run.deadline is not None and now + wait > run.deadline:
                return False
            if held is not None and not self._sleep_given:
                self._cancel.wait(min(wait, SLICE))  # and look at the hold again
            else:
                self._sleep(wait)

    def _exchange(self, host: _Host, url: str, purpose: str, exchanges: list[Exchange],
                  run: _Run | None = None, held: CancelFlag | None = None) -> Exchange:
        """One request to ``url`` with its retries (each attempt is an exchange appended and recorded), within
        the fetch's time limit (``run``: that of the fetch it belongs to; default a new one): an attempt that
        could only start after it is not made."""
        run = run if run is not None else _Run()
        p = self.policy
        ex: Exchange | None = None
        with host.lock:
            for attempt in range(p.max_retries + 1):
                if not self._wait_turn(host, run, held):
                    break
                if run.deadline is None:
                    run.deadline = self._clock() + p.max_time
                ex = self._once(host, url, purpose, run)
                end = self._clock()
                host.next_time = end + host.delay
                exchanges.append(ex)
                if self.recorder is not None:
                    self.recorder.write_exchange(ex)
                if ex.error == "cancelled":
                    raise _CancelledFetch
                retry = ex.error == "connect" or (ex.status in RETRY_STATUSES)
                if not retry or attempt == p.max_retries:
                    return ex
                wait = retry_after_seconds(ex.header("retry-after")) if ex.status is not None else None
                if wait is None:
                    wait = p.backoff * 2 ** attempt
                host.next_time = max(host.next_time, end + min(wait, p.max_retry_after))
        if ex is not None:
            return ex  # the last attempt: no time was left for another
        late = Exchange(url=url, purpose=purpose, method="GET", request_headers=[], started_at=_utc_now(),
                        error="timeout", sent=False,
                        detail=f"the request could not start within the fetch's time limit (max_time={p.max_time:g} s)")
        exchanges.append(late)
        return late

    def _once(self, host: _Host, url: str, purpose: str, run: _Run) -> Exchange:
        import urllib3
        from urllib3.exceptions import ConnectTimeoutError, NewConnectionError, ReadTimeoutError

        p = self.policy
        parts = urlsplit(url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        accept = "text/plain,*/*;q=0.5" if purpose == "robots" else \
            ",".join(p.content_types) + ",*/*;q=0.1"
        req_headers = [("Host", parts.netloc), ("User-Agent", p.agent), ("Accept", accept),
                       ("Accept-Encoding", "gzip, deflate")]
        ex = Exchange(url=url, purpose=purpose, method="GET", request_headers=req_headers, started_at=_utc_now())
        assert run.deadline is not None
        left = max(0.0, run.deadline - self._clock())
        budget = Budget(deadline=time.monotonic() + left, connect_timeout=p.connect_timeout,
                        read_timeout=p.read_timeout, cancel=self._cancel)
        pool = self._pool(host)
        with bounded(budget):
            try:
                resp = pool.urlopen("GET", target, headers=dict(req_headers), redirect=False, retries=False,
                                    preload_content=False, decode_content=True, assert_same_host=False,
                                    release_conn=False, pool_timeout=p.connect_timeout + p.max_time,
                                    timeout=urllib3.Timeout(connect=max(0.001, min(p.connect_timeout, left)),
                                                            read=p.read_timeout))
            except ConnectTimeoutError as e:  # NewConnectionError subclasses it in urllib3 2
                ex.error, ex.detail = "connect" if isinstance(e, NewConnectionError) else "timeout", _detail(e)
                ex.sent = False
                return self._cancelled_or(ex)
            except ReadTimeoutError as e:
                ex.error, ex.detail = "timeout", _detail(e)
                return self._cancelled_or(ex)
            except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, ValueError) as e:
                ex.error, ex.detail = "connect", _detail(e)  # also a malformed status line or header block
                return self._cancelled_or(ex)
            try:
                self._read(resp, ex, purpose)
                return self._cancelled_or(ex)
            finally:
                resp.release_conn()

    def _read(self, resp: Any, ex: Exchange, purpose: str) -> None:
        """The status, headers and (unless it is not wanted or not decodable) the body of ``resp`` into ``ex``."""
        import urllib3
        from urllib3.exceptions import ReadTimeoutError

        p = self.policy
        ex.status = int(resp.status)
        ex.reason = resp.reason or ""
        ex.http_version = {10: "HTTP/1.0", 11: "HTTP/1.1"}.get(getattr(resp, "version", 11), "HTTP/1.1")
        ex.headers = [(str(k), str(v)) for k, v in resp.headers.items()]
        ex.peer_ip = _peer_ip(resp)
        mime, _ = parse_content_type(ex.header("content-type"))
        codings = [c.strip().lower() for k, v in ex.headers if k.lower() == "content-encoding"
                   for c in v.split(",") if c.strip()]
        if not set(codings) <= DECODED_CODINGS:
            ex.decoded = False  # an encoding not asked for: its bytes are not the page
            ex.truncated = "unspecified"
            resp.close()
            return
        if purpose == "page" and ex.status == 200 and mime is not None and mime not in p.content_types:
            ex.truncated = "unspecified"  # not a page: the body is not read
            resp.close()
            return
        cap = p.robots_max_bytes if purpose == "robots" else p.max_bytes
        body = bytearray()
        decoder = ContentDecoder(codings)  # urllib3's decoders would take a cut-short stream for a short page
        try:
            for chunk in resp.stream(CHUNK, decode_content=False):
                body += decoder.feed(chunk, cap + CHUNK - len(body))
                if len(body) > cap:
                    ex.truncated = "length"
                    break
            else:
                decoder.finish()
        except ReadTimeoutError as e:
            ex.truncated, ex.error, ex.detail = "time", "timeout", _detail(e)
        except DecodeError as e:  # the server's bytes are wrong: not a network fault, not retried
            ex.truncated, ex.error, ex.detail = "unspecified", "decode", _detail(e)
        except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError, ValueError) as e:
            # a broken connection: reset, closed before Content-Length bytes, a malformed chunk size
            ex.truncated, ex.error, ex.detail = "disconnect", "connect", _detail(e)
        ex.body = bytes(body)
        if ex.truncated is not None:
            resp.close()

    def _cancelled_or(self, ex: Exchange) -> Exchange:
        """``ex``, marked ``"cancelled"`` when :meth:`cancel` ended it."""
        if ex.error is not None and self._cancel.is_set():
            ex.error = "cancelled"
            if ex.status is not None:
                ex.truncated = "unspecified"
        return ex

    # ------------------------------------------------------------------ results
    def _finish(self, url: str, final_url: str | None, status: int | None, ex: Exchange | None,
                error: str | None, chain: list[tuple[str, int]], started: str, t0: float,
                exchanges: list[Exchange]) -> FetchResult:
        headers: list[tuple[str, str]] = list(ex.headers) if ex is not None else []
        content_type = charset = None
        body = b""
        if ex is not None and ex.status is not None:
            status = ex.status
            content_type, charset = parse_content_type(ex.header("content-type"))
            if error is None:
                error = self._page_error(ex, content_type)
            if error is None:
                body = ex.body
                if content_type is None:
                    content_type = "text/html"
                bom = sniff_charset(body[:3])
                charset = bom or charset or sniff_charset(body)
        result = FetchResult(url=url, final_url=final_url, status=status, headers=headers, body=body,
                             content_type=content_type, charset=charset, error=error, redirects=chain,
                             fetched_at=started, elapsed=self._clock() - t0, exchanges=exchanges)
        if self.recorder is not None and error != "cancelled":
            self.recorder.write_result(result)
        return result

    def _page_error(self, ex: Exchange, content_type: str | None) -> str | None:
        if ex.status != 200:
            return f"http-{ex.status}"
        if not ex.decoded:
            return "content-encoding"
        if ex.truncated == "length":
            return "too-large"
        if ex.truncated == "unspecified":
            return "content-type"
        if content_type is None and not looks_like_html(ex.body):
            return "content-type"
        if content_type is not None and content_type not in self.policy.content_types:
            return "content-type"
        return None


def _robots_unreachable(ex: Exchange) -> str | None:
    """Why a robots.txt reply makes its origin unreachable (``"timeout"``, ``"connect"``, ``"disconnect"``,
    ``"decode"``, ``"http-429"``, ``"http-5xx"`` codes), or ``None`` for a complete reply: a body cut off by the byte
    cap (``truncated == "length"``) is complete enough, as RFC 9309 lets a crawler stop after 500 KiB."""
    if ex.status is None:
        return ex.error or "connect"
    if ex.status == 429 or ex.status >= 500:
        return f"http-{ex.status}"
    if not ex.decoded or ex.error == "decode":
        return "decode"
    if ex.error is not None or ex.truncated in ("time", "disconnect"):
        return "timeout" if ex.truncated == "time" or ex.error == "timeout" else "disconnect"
    return None


def _detail(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _peer_ip(resp: Any) -> str | None:
    try:
        sock = resp.connection.sock
        return str(sock.getpeername()[0])
    except (AttributeError, OSError, IndexError, TypeError):
        return None
