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
   a redirect out of the crawl's scope is not followed and disallows the origin).
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
unresolvable, TLS).

A *host* here is an origin (scheme, host and port), the unit robots.txt applies to. The HTTP client is
``urllib3``: its ``HTTPConnectionPool(maxsize=1, block=True)`` is exactly "one connection per host", it
streams bodies with ``preload_content=False`` and leaves redirects and retries to the caller
(``redirect=False, retries=False``) — ``requests`` wraps the same library and would only add a second
redirect/retry layer to switch off.
"""
from __future__ import annotations

import email.utils
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any
from urllib.parse import urlsplit

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
    parse_content_type,
    sniff_charset,
)
from gym_crawl.web.urls import canonical_url

# FetchPolicy, FetchResult, Exchange ... are defined in policy.py / result.py and importable from here too
__all__ = [
    "FETCH_ERRORS",
    "ROBOTS_TOKEN",
    "Exchange",
    "FetchPolicy",
    "FetchResult",
    "PoliteFetcher",
    "Recorder",
    "default_user_agent",
    "retry_after_seconds",
    "url_pattern",
]

CHUNK = 16384
"""Bytes read from a response body per read; a capped body holds at most ``max_bytes + CHUNK`` bytes."""
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
RETRY_STATUSES = frozenset({429, 503})
ROBOTS_MAX_REDIRECTS = 5
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE | re.DOTALL)


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: delta seconds or an HTTP date; ``None`` when absent or
    unparseable; never negative."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
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
        self.robots_expires = float("inf")
        self.pages = 0
        self.patterns: Counter[str] = Counter()


class PoliteFetcher:
    """Fetches URLs one at a time under a :class:`FetchPolicy` (see the module docstring).

    :param policy: the politeness/scope policy; default ``FetchPolicy()``.
    :param recorder: receives every :class:`Exchange` and :class:`FetchResult` (e.g. a ``WarcRecorder``);
        default none.
    :param clock: monotonic seconds (default ``time.monotonic``); :param sleep: waits seconds (default
        ``time.sleep``) — injectable so tests can run politeness on a fake clock.

    Thread-safe: requests to one origin are serialised by a per-origin lock, so several threads may share a
    fetcher without ever opening two connections to one origin. Use it as a context manager or call
    :meth:`close` to close its connections.
    """

    def __init__(self, policy: FetchPolicy | None = None, *, recorder: Recorder | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        try:
            import urllib3  # noqa: F401
        except ImportError:  # pragma: no cover - urllib3 comes with the web extra
            raise ImportError("the live fetcher needs urllib3: pip install 'gym-crawl[web]'") from None
        if policy is not None and not isinstance(policy, FetchPolicy):
            raise TypeError(f"policy must be a FetchPolicy, got {type(policy).__name__}")
        self.policy = policy or FetchPolicy()
        self.recorder = recorder
        self._clock = clock
        self._sleep = sleep
        self._hosts: dict[str, _Host] = {}
        self._hosts_lock = threading.Lock()
        self._rate_lock = threading.Lock()
        self._next_global = float("-inf")
        self._closed = False

    # ------------------------------------------------------------------ public API
    def check(self, url: str) -> str | None:
        """Why :meth:`fetch` would refuse ``url`` before requesting it (``"out-of-scope"``, ``"trap:..."``,
        ``"host-cap"``, ``"robots"``), or ``None``. May fetch the origin's robots.txt (when not cached)."""
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, got {type(url).__name__}")
        reason = self._refusal(canonical_url(url))
        if self.recorder is not None:
            self.recorder.flush()
        return reason

    def fetch(self, url: str) -> FetchResult:
        """Fetch ``url`` politely (blocking); never raises for network or HTTP problems (see the module
        docstring for the ``error`` values). Redirects are followed and every hop is checked and recorded."""
        if self._closed:
            raise RuntimeError("PoliteFetcher is closed")
        if not isinstance(url, str):
            raise TypeError(f"url must be a str, got {type(url).__name__}")
        t0 = self._clock()
        started = _utc_now()
        exchanges: list[Exchange] = []
        chain: list[tuple[str, int]] = []
        canon = canonical_url(url)
        reason = self._refusal(canon, exchanges)
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
            ex = self._exchange(host, current, "page", exchanges)
            if ex.status is None:
                return self._finish(url, current, None, ex, ex.error, chain, started, t0, exchanges)
            location = ex.header("location")
            if ex.status in REDIRECT_STATUSES and location:
                chain.append((current, ex.status))
                nxt = canonical_url(location, base=current)
                if nxt is None:
                    return self._finish(url, current, ex.status, ex, "out-of-scope", chain, started, t0, exchanges)
                err: str | None
                if nxt in seen:
                    err = "redirect-loop"
                elif len(chain) > self.policy.max_redirects:
                    err = "redirect-limit"
                else:
                    err = self._refusal(nxt, exchanges)
                if err is not None:
                    return self._finish(url, current, ex.status, ex, err, chain, started, t0, exchanges)
                seen.add(nxt)
                current = nxt
                continue
            return self._finish(url, current, ex.status, ex, ex.error, chain, started, t0, exchanges)

    def robots(self, url: str) -> tuple[str, str | None, list[Exchange]]:
        """The robots.txt rules in force for ``url``'s origin, reading the file (politely, blocking) when it is
        not cached: ``(kind, text, exchanges)`` — ``kind`` ``"allow"`` (no usable file: 4xx, or the fetcher
        ignores robots.txt), ``"disallow"`` (unreachable, 429/5xx, or redirected out of scope) or ``"parse"``
        (``text`` is the file protego parsed); ``exchanges`` the requests this call made (none when cached)."""
        canon = canonical_url(url)
        if canon is None:
            raise ValueError(f"url {url!r} is not an http(s) URL with a host")
        exchanges: list[Exchange] = []
        if not self.policy.obey_robots:
            return "allow", None, exchanges
        host = self._host(canon)
        self._robots_allow(host, canon, exchanges)
        with host.lock:
            rp, text = host.robots, host.robots_text
        if rp is True or rp is False:
            return ("allow" if rp else "disallow"), None, exchanges
        return "parse", text, exchanges

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
    def _refusal(self, canon: str | None, exchanges: list[Exchange] | None = None) -> str | None:
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
        if p.obey_robots and not self._robots_allow(host, canon, exchanges if exchanges is not None else []):
            return "robots"
        return None

    # ------------------------------------------------------------------ robots.txt
    def _robots_allow(self, host: _Host, canon: str, exchanges: list[Exchange]) -> bool:
        with host.lock:
            if host.robots is None or self._clock() >= host.robots_expires:
                host.robots, transient = self._read_robots(host, exchanges)
                p = self.policy
                host.robots_expires = self._clock() + (p.robots_retry if transient else p.robots_ttl)
            rp = host.robots
        if rp is True or rp is False:
            return rp
        return bool(rp.can_fetch(canon, self.policy.agent))

    def _read_robots(self, host: _Host, exchanges: list[Exchange]) -> tuple[Any, bool]:
        """``(rules, transient)``: a ``protego.Protego``, or ``True`` (allow all) / ``False`` (disallow
        all); ``transient`` when the file was unreachable (429, 5xx, timeout, connection error)."""
        try:
            from protego import Protego
        except ImportError:  # pragma: no cover - protego comes with the web extra
            raise ImportError("robots.txt parsing needs protego: pip install 'gym-crawl[web]'") from None
        url = host.origin + "/robots.txt"
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            h = self._host(url)
            ex = self._exchange(h, url, "robots", exchanges)
            if ex.status is None:
                return False, True  # timeout / connection error: disallow all, for now
            location = ex.header("location")
            if ex.status in REDIRECT_STATUSES and location:
                nxt = canonical_url(location, base=url)
                if nxt is None:
                    return True, False  # an unusable Location: as no robots.txt
                if not in_scope(self.policy, nxt):
                    return False, False  # its rules live where the crawl may not go: disallow rather than guess
                url = nxt
                continue
            if ex.status == 429 or ex.status >= 500:
                return False, True
            if ex.status >= 400:
                return True, False
            if 200 <= ex.status < 300:
                text = ex.body[:self.policy.robots_max_bytes].decode("utf-8", errors="replace")
                rp = Protego.parse(text)
                host.robots_text = text
                cd = rp.crawl_delay(self.policy.agent)
                rr = rp.request_rate(self.policy.agent)
                extra = max(float(cd or 0.0), rr.seconds / rr.requests if rr and rr.requests else 0.0)
                old = host.delay
                host.delay = max(self.policy.delay, min(extra, self.policy.max_crawl_delay))
                if h is host:  # the robots.txt response itself starts the new wait
                    host.next_time += host.delay - old
                return rp, False
            return True, False  # 1xx / other 3xx: as Google, treat as no robots.txt
        return True, False  # too many redirects: as a 404

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
            cls = urllib3.HTTPSConnectionPool if p.scheme == "https" else urllib3.HTTPConnectionPool
            host.pool = cls(p.hostname, p.port, maxsize=1, block=True, retries=False,
                            timeout=urllib3.Timeout(connect=self.policy.connect_timeout,
                                                    read=self.policy.read_timeout))
        return host.pool

    def _wait_turn(self, host: _Host) -> None:
        """Sleep until ``host`` may be requested and the global rate allows a request start."""
        while True:
            with self._rate_lock:
                now = self._clock()
                wait = max(host.next_time, self._next_global) - now
                if wait <= 0:
                    if self.policy.rate is not None:
                        self._next_global = now + 1.0 / self.policy.rate
                    return
            self._sleep(wait)

    def _exchange(self, host: _Host, url: str, purpose: str, exchanges: list[Exchange]) -> Exchange:
        """One request to ``url`` with its retries (each attempt is an exchange appended and recorded)."""
        p = self.policy
        with host.lock:
            for attempt in range(p.max_retries + 1):
                self._wait_turn(host)
                ex = self._once(host, url, purpose)
                end = self._clock()
                host.next_time = end + host.delay
                exchanges.append(ex)
                if self.recorder is not None:
                    self.recorder.write_exchange(ex)
                retry = ex.error == "connect" or (ex.status in RETRY_STATUSES)
                if not retry or attempt == p.max_retries:
                    return ex
                wait = retry_after_seconds(ex.header("retry-after")) if ex.status is not None else None
                if wait is None:
                    wait = p.backoff * 2 ** attempt
                host.next_time = max(host.next_time, end + min(wait, p.max_retry_after))
            raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, host: _Host, url: str, purpose: str) -> Exchange:
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
        start = self._clock()
        pool = self._pool(host)
        try:
            resp = pool.urlopen("GET", target, headers=dict(req_headers), redirect=False, retries=False,
                                preload_content=False, decode_content=True, assert_same_host=False,
                                release_conn=False, pool_timeout=p.connect_timeout + p.max_time)
        except ConnectTimeoutError as e:  # NewConnectionError subclasses it in urllib3 2
            ex.error, ex.detail = "connect" if isinstance(e, NewConnectionError) else "timeout", _detail(e)
            ex.sent = False
            return ex
        except ReadTimeoutError as e:
            ex.error, ex.detail = "timeout", _detail(e)
            return ex
        except (urllib3.exceptions.HTTPError, OSError) as e:
            ex.error, ex.detail = "connect", _detail(e)
            return ex
        try:
            ex.status = int(resp.status)
            ex.reason = resp.reason or ""
            ex.http_version = {10: "HTTP/1.0", 11: "HTTP/1.1"}.get(getattr(resp, "version", 11), "HTTP/1.1")
            ex.headers = [(str(k), str(v)) for k, v in resp.headers.items()]
            ex.peer_ip = _peer_ip(resp)
            mime, _ = parse_content_type(ex.header("content-type"))
            if (purpose == "page" and ex.status == 200 and mime is not None
                    and mime not in p.content_types):
                ex.truncated = "unspecified"  # not a page: the body is not read
                resp.close()
                return ex
            cap = p.robots_max_bytes if purpose == "robots" else p.max_bytes
            body = bytearray()
            try:
                for chunk in resp.stream(CHUNK, decode_content=True):
                    body += chunk
                    if len(body) > cap:
                        ex.truncated = "length"
                        break
                    if self._clock() - start > p.max_time:
                        ex.truncated, ex.error = "time", "timeout"
                        break
            except ReadTimeoutError as e:
                ex.truncated, ex.error, ex.detail = "time", "timeout", _detail(e)
            except (urllib3.exceptions.HTTPError, OSError) as e:
                ex.truncated, ex.error, ex.detail = "disconnect", "connect", _detail(e)
            ex.body = bytes(body)
            if ex.truncated is not None:
                resp.close()
            return ex
        finally:
            resp.release_conn()

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
        if self.recorder is not None:
            self.recorder.write_result(result)
        return result

    def _page_error(self, ex: Exchange, content_type: str | None) -> str | None:
        if ex.status != 200:
            return f"http-{ex.status}"
        if ex.truncated == "length":
            return "too-large"
        if ex.truncated == "unspecified":
            return "content-type"
        if content_type is None and not _HTML_START.match(ex.body[:1024].lstrip(b"\xef\xbb\xbf")):
            return "content-type"
        if content_type is not None and content_type not in self.policy.content_types:
            return "content-type"
        return None


def _detail(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _peer_ip(resp: Any) -> str | None:
    try:
        sock = resp.connection.sock
        return str(sock.getpeername()[0])
    except (AttributeError, OSError, IndexError, TypeError):
        return None
