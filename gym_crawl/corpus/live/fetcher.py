"""A polite HTTP fetcher: robots.txt, per-host delays, one connection per host, caps, scope and trap guards.

:class:`PoliteFetcher` fetches one URL at a time (``fetch`` blocks and sleeps as politeness requires) and
never raises for network or HTTP problems: the :class:`FetchResult` names them in ``error``. Every HTTP
request/response pair (redirect hops, retries and robots.txt fetches included) is an :class:`Exchange`,
handed to an optional recorder (:class:`~gym_crawl.corpus.live.warc_io.WarcRecorder` writes them to WARC).

What the fetcher does, in order, for ``fetch(url)``:

1. **canonical URL** (:func:`gym_crawl.corpus.urls.canonical_url`); a URL that is not ``http(s)`` with a host
   is ``"out-of-scope"``;
2. **scope**: ``allowed_hosts`` / ``allowed_domains`` and the ``allow_patterns`` / ``deny_patterns``
   regular expressions → ``"out-of-scope"``;
3. **trap guards** → ``"trap:url-length"``, ``"trap:path-depth"``, ``"trap:query-params"``,
   ``"trap:repeated-segment"``, ``"trap:pattern"`` (too many pages whose URL differs only in its digits,
   as calendars and session ids do), and the per-host page cap → ``"host-cap"``;
4. **robots.txt** of the origin, fetched once and cached (parsed by ``protego``): a disallowed URL is
   ``"robots"``. As Google documents it: a 2xx robots.txt is obeyed, a 4xx one (except 429) allows
   everything, a 429/5xx, a timeout or a connection error disallows the whole origin; at most
   :attr:`FetchPolicy.robots_max_bytes` bytes are read and up to 5 redirects followed (more: allow all).
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
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from gym_crawl.corpus.urls import canonical_url

__all__ = [
    "FETCH_ERRORS",
    "ROBOTS_TOKEN",
    "Exchange",
    "FetchPolicy",
    "FetchResult",
    "PoliteFetcher",
    "default_user_agent",
]

ROBOTS_TOKEN = "gym_crawl"
"""The product token robots.txt ``User-agent`` lines match (the User-Agent header starts with it)."""

FETCH_ERRORS = ("robots", "out-of-scope", "trap:url-length", "trap:path-depth", "trap:query-params",
                "trap:repeated-segment", "trap:pattern", "host-cap", "timeout", "connect", "http-<code>",
                "too-large", "content-type", "redirect-limit", "redirect-loop")
"""Every value :attr:`FetchResult.error` can take (``"http-<code>"`` stands for ``"http-404"`` etc.)."""

CHUNK = 16384
"""Bytes read from a response body per read; a capped body holds at most ``max_bytes + CHUNK`` bytes."""
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
RETRY_STATUSES = frozenset({429, 503})
ROBOTS_MAX_REDIRECTS = 5
_DIGITS = re.compile(r"\d+")
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE | re.DOTALL)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


def default_user_agent(contact: str | None = None) -> str:
    """``gym_crawl/<version>`` with ``(+<contact>)`` appended when a contact URL is given."""
    from gym_crawl import __version__

    return f"{ROBOTS_TOKEN}/{__version__}" + (f" (+{contact})" if contact else "")


def _utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class FetchPolicy:
    """How politely and how far :class:`PoliteFetcher` fetches. Every field has a safe default.

    :param user_agent: the whole User-Agent header; default ``None`` = ``gym_crawl/<version> (+<contact>)``.
    :param contact: a URL (or ``mailto:``) where site owners reach the crawl's operator, appended to the
        default User-Agent; default ``None``.
    :param obey_robots: fetch and obey each origin's robots.txt; default ``True``.
    :param delay: minimum seconds between the end of one response from an origin and the next request to
        it; default ``1.0``. robots.txt ``Crawl-delay`` raises it per origin.
    :param max_crawl_delay: the largest ``Crawl-delay`` honoured (seconds); a larger one is capped to it;
        default ``60.0``.
    :param rate: global limit on request starts per second over all origins, ``None`` = none; default
        ``10.0``.
    :param connect_timeout: seconds to establish a connection; default ``5.0``.
    :param read_timeout: seconds to wait for the status line or for any next piece of the body; default
        ``15.0``.
    :param max_time: seconds one request may take in total (a server trickling bytes below the read
        timeout is cut off); default ``60.0``.
    :param max_bytes: body bytes read per page before the fetch stops with ``"too-large"``; default
        ``2 MiB``.
    :param content_types: media types that are pages; default ``("text/html", "application/xhtml+xml")``.
    :param max_redirects: redirect hops followed per fetch; default ``5``.
    :param max_retries: further attempts after a 429/503 reply or a connection error; default ``2``.
    :param backoff: seconds before the first retry when the reply gives no ``Retry-After``; doubles per
        retry; default ``1.0``.
    :param max_retry_after: cap (seconds) on a ``Retry-After`` wait and on the backoff; default ``60.0``.
    :param allowed_hosts: host names (``"example.org"``) or ``host:port`` the crawl may fetch; empty =
        any host; default ``()``.
    :param allowed_domains: registrable domains whose hosts and sub-hosts may be fetched
        (``"example.org"`` admits ``www.example.org``); empty = any; default ``()``. When both
        ``allowed_hosts`` and ``allowed_domains`` are given, a URL in either is in scope.
    :param allow_patterns: regular expressions (``re.search`` on the canonical URL); when given, a URL must
        match one; default ``()``.
    :param deny_patterns: regular expressions; a URL matching one is out of scope; default ``()``.
    :param max_url_length: characters of the canonical URL; default ``2048``.
    :param max_path_depth: non-empty path segments; default ``16``.
    :param max_query_params: query parameters; default ``8``.
    :param max_repeated_segments: times one path segment may occur in a path (``/a/b/a/b/a/``); default ``3``.
    :param max_pages_per_pattern: pages fetched per origin whose URLs are equal once digit runs are
        replaced and query values dropped (``/calendar/2026/11/`` and ``/calendar/2027/1/`` share one
        pattern, and so do ``/p/1`` and ``/p/2`` of a site that numbers its pages — hence off by default);
        ``None`` = no limit; default ``None``.
    :param max_pages_per_host: page requests per origin (redirect hops count, retries do not); ``None`` =
        no limit; default ``10000``.
    :param robots_max_bytes: bytes of robots.txt read (Google reads 500 KiB); default ``512000``.
    """

    user_agent: str | None = None
    contact: str | None = None
    obey_robots: bool = True
    delay: float = 1.0
    max_crawl_delay: float = 60.0
    rate: float | None = 10.0
    connect_timeout: float = 5.0
    read_timeout: float = 15.0
    max_time: float = 60.0
    max_bytes: int = 2 * 1024 * 1024
    content_types: tuple[str, ...] = ("text/html", "application/xhtml+xml")
    max_redirects: int = 5
    max_retries: int = 2
    backoff: float = 1.0
    max_retry_after: float = 60.0
    allowed_hosts: tuple[str, ...] = ()
    allowed_domains: tuple[str, ...] = ()
    allow_patterns: tuple[str, ...] = ()
    deny_patterns: tuple[str, ...] = ()
    max_url_length: int = 2048
    max_path_depth: int = 16
    max_query_params: int = 8
    max_repeated_segments: int = 3
    max_pages_per_pattern: int | None = None
    max_pages_per_host: int | None = 10000
    robots_max_bytes: int = 512000

    def __post_init__(self) -> None:
        for name in ("allowed_hosts", "allowed_domains", "allow_patterns", "deny_patterns", "content_types"):
            v = getattr(self, name)
            if isinstance(v, str):
                raise TypeError(f"FetchPolicy.{name} must be a sequence of strings, got the string {v!r}")
            object.__setattr__(self, name, tuple(v))
        for name in ("delay", "max_crawl_delay", "backoff", "max_retry_after"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"FetchPolicy.{name} must be >= 0 seconds, got {getattr(self, name)!r}")
        for name in ("connect_timeout", "read_timeout", "max_time"):
            if not getattr(self, name) > 0:
                raise ValueError(f"FetchPolicy.{name} must be > 0 seconds, got {getattr(self, name)!r}")
        if self.rate is not None and not self.rate > 0:
            raise ValueError(f"FetchPolicy.rate must be > 0 requests per second or None, got {self.rate!r}")
        for name in ("max_bytes", "max_url_length", "max_path_depth", "robots_max_bytes",
                     "max_repeated_segments"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"FetchPolicy.{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("max_redirects", "max_retries", "max_query_params"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"FetchPolicy.{name} must be >= 0, got {getattr(self, name)!r}")
        for name in ("max_pages_per_pattern", "max_pages_per_host"):
            v = getattr(self, name)
            if v is not None and not v >= 1:
                raise ValueError(f"FetchPolicy.{name} must be >= 1 or None, got {v!r}")
        for name in ("allow_patterns", "deny_patterns"):
            for p in getattr(self, name):
                try:
                    re.compile(p)
                except re.error as e:
                    raise ValueError(f"FetchPolicy.{name}: invalid regular expression {p!r}: {e}") from None

    @property
    def agent(self) -> str:
        """The User-Agent header sent with every request."""
        return self.user_agent or default_user_agent(self.contact)

    def to_dict(self) -> dict[str, Any]:
        """The policy as JSON-ready values (tuples become lists); ``FetchPolicy(**d)`` rebuilds it."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FetchPolicy:
        """The policy ``to_dict`` wrote; unknown keys are an error naming them."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown FetchPolicy fields {unknown}; known: {sorted(names)}")
        return cls(**d)


@dataclass
class Exchange:
    """One HTTP request and (when one arrived) its response, as sent and received.

    ``purpose`` is ``"page"`` or ``"robots"``. ``status`` is ``None`` when no status line arrived (then
    ``error`` says why). ``headers`` are the response headers as received (repeats kept, in order);
    ``body`` the content-decoded body bytes read (possibly partial: ``truncated`` is ``"length"`` past
    the byte cap, ``"time"`` on a timeout, ``"disconnect"`` when the connection broke, ``"unspecified"``
    when reading stopped at a disallowed content type).
    """

    url: str
    purpose: str
    method: str
    request_headers: list[tuple[str, str]]
    started_at: str
    status: int | None = None
    reason: str = ""
    http_version: str = "HTTP/1.1"
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""
    truncated: str | None = None
    peer_ip: str | None = None
    error: str | None = None

    def header(self, name: str) -> str | None:
        """The first response header called ``name`` (case-insensitive), or ``None``."""
        name = name.lower()
        return next((v for k, v in self.headers if k.lower() == name), None)


@dataclass
class FetchResult:
    """The outcome of :meth:`PoliteFetcher.fetch`.

    :param url: the URL as the caller passed it.
    :param final_url: the canonical URL of the last request made (``None`` when the URL was refused before
        any request). A fetch stopped at a redirect (loop, limit, a target refused by scope, traps or
        robots.txt) ends at the redirecting URL, which is then also the last entry of ``redirects``.
    :param status: HTTP status of the last response (``None`` when none arrived).
    :param headers: response headers of the last response, ``[(name, value), ...]`` in order.
    :param body: the page's bytes (content-decoded); empty unless ``error`` is ``None``.
    :param content_type: media type of the last response, lowercased, without parameters (``None`` when
        absent).
    :param charset: the encoding declared by the ``Content-Type`` header, else by a byte-order mark, else
        by a ``<meta charset>`` in the first 4 KiB (lowercased; ``None`` when undeclared).
    :param error: ``None`` for a page, else one of :data:`FETCH_ERRORS`.
    :param redirects: the redirecting hops, ``[(url, status), ...]`` in order (the final URL and status
        are ``final_url`` / ``status``).
    :param fetched_at: UTC time the fetch started, ISO 8601 (``2026-11-25T14:38:36.123456Z``).
    :param elapsed: seconds the fetch took, politeness waits included.
    :param exchanges: every request/response of this fetch (redirect hops, retries, robots.txt), in order;
        not part of equality and not stored in WARC metadata (the WARC holds them as records).
    """

    url: str
    final_url: str | None
    status: int | None
    headers: list[tuple[str, str]]
    body: bytes
    content_type: str | None
    charset: str | None
    error: str | None
    redirects: list[tuple[str, int]]
    fetched_at: str
    elapsed: float
    exchanges: list[Exchange] = field(default_factory=list, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        """True for a page (no error)."""
        return self.error is None

    @property
    def text(self) -> str:
        """The body decoded: with ``charset`` when declared and known, else UTF-8 when the bytes are valid
        UTF-8, else windows-1252 (what browsers assume for undeclared Western pages)."""
        if self.charset:
            try:
                return self.body.decode(self.charset, errors="replace")
            except LookupError:
                pass
        try:
            return self.body.decode("utf-8")
        except UnicodeDecodeError:
            return self.body.decode("cp1252", errors="replace")

    def to_metadata(self) -> dict[str, Any]:
        """Every field but ``body`` and ``exchanges``, JSON-ready (the WARC metadata record of a fetch)."""
        return {"url": self.url, "final_url": self.final_url, "status": self.status,
                "headers": [list(h) for h in self.headers], "content_type": self.content_type,
                "charset": self.charset, "error": self.error, "redirects": [list(r) for r in self.redirects],
                "fetched_at": self.fetched_at, "elapsed": self.elapsed, "body_length": len(self.body)}

    @classmethod
    def from_metadata(cls, meta: dict[str, Any], body: bytes = b"") -> FetchResult:
        """The result ``to_metadata`` described, with ``body``."""
        return cls(url=meta["url"], final_url=meta["final_url"], status=meta["status"],
                   headers=[(str(k), str(v)) for k, v in meta["headers"]], body=body,
                   content_type=meta["content_type"], charset=meta["charset"], error=meta["error"],
                   redirects=[(str(u), int(s)) for u, s in meta["redirects"]], fetched_at=meta["fetched_at"],
                   elapsed=float(meta["elapsed"]))


class Recorder(Protocol):
    """What the fetcher hands its exchanges and results to (``WarcRecorder`` implements it)."""

    def write_exchange(self, exchange: Exchange) -> None: ...

    def write_result(self, result: FetchResult) -> None: ...

    def flush(self) -> None: ...


def parse_content_type(value: str | None) -> tuple[str | None, str | None]:
    """``(media type lowercased, charset lowercased or None)`` of a ``Content-Type`` header value."""
    if not value:
        return None, None
    parts = value.split(";")
    mime = parts[0].strip().lower() or None
    charset = None
    for p in parts[1:]:
        k, _, v = p.partition("=")
        if k.strip().lower() == "charset":
            charset = v.strip().strip("\"'").lower() or None
    return mime, charset


def sniff_charset(body: bytes) -> str | None:
    """The encoding a byte-order mark or a ``<meta charset>`` in the first 4 KiB declares, or ``None``."""
    if body.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    if body.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    m = _META_CHARSET.search(body[:4096])
    return m.group(1).decode("ascii", "replace").lower() if m else None


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


def url_pattern(url: str) -> str:
    """The URL with digit runs replaced by ``#`` and query values dropped (the trap-pattern key)."""
    parts = urlsplit(url)
    keys = "&".join(sorted(k for k, _ in parse_qsl(parts.query, keep_blank_values=True)))
    return _DIGITS.sub("#", f"{parts.scheme}://{parts.netloc}{parts.path}") + (f"?{keys}" if keys else "")


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
        self._allow = [re.compile(p) for p in self.policy.allow_patterns]
        self._deny = [re.compile(p) for p in self.policy.deny_patterns]
        self._closed = False

    # ------------------------------------------------------------------ public API
    def check(self, url: str) -> str | None:
        """Why :meth:`fetch` would refuse ``url`` before requesting it (``"out-of-scope"``, ``"trap:..."``,
        ``"host-cap"``, ``"robots"``), or ``None``. May fetch the origin's robots.txt (once)."""
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
        current: str = canon  # type: ignore[assignment]
        seen = {current}
        while True:
            host = self._host(current)
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
                    err = "out-of-scope"
                elif nxt in seen:
                    err = "redirect-loop"
                elif len(chain) > self.policy.max_redirects:
                    err = "redirect-limit"
                else:
                    err = self._refusal(nxt, exchanges)
                if err is not None:
                    return self._finish(url, current, ex.status, ex, err, chain, started, t0, exchanges)
                seen.add(nxt)  # type: ignore[arg-type]
                current = nxt  # type: ignore[assignment]
                continue
            return self._finish(url, current, ex.status, ex, ex.error, chain, started, t0, exchanges)

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
    def _in_scope(self, canon: str) -> bool:
        p = self.policy
        parts = urlsplit(canon)
        hostname = (parts.hostname or "").lower()
        if p.allowed_hosts or p.allowed_domains:
            netloc = parts.netloc.lower()
            ok = hostname in p.allowed_hosts or netloc in p.allowed_hosts or any(
                hostname == d or hostname.endswith("." + d) for d in p.allowed_domains)
            if not ok:
                return False
        if self._allow and not any(r.search(canon) for r in self._allow):
            return False
        return not any(r.search(canon) for r in self._deny)

    def _trap(self, canon: str) -> str | None:
        p = self.policy
        if len(canon) > p.max_url_length:
            return "trap:url-length"
        parts = urlsplit(canon)
        segments = [s for s in parts.path.split("/") if s]
        if len(segments) > p.max_path_depth:
            return "trap:path-depth"
        if len(parse_qsl(parts.query, keep_blank_values=True)) > p.max_query_params:
            return "trap:query-params"
        if segments and max(Counter(segments).values()) > p.max_repeated_segments:
            return "trap:repeated-segment"
        return None

    def _refusal(self, canon: str | None, exchanges: list[Exchange] | None = None) -> str | None:
        if canon is None or not self._in_scope(canon):
            return "out-of-scope"
        trap = self._trap(canon)
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
            if host.robots is None:
                host.robots = self._read_robots(host, exchanges)
            rp = host.robots
        if rp is True or rp is False:
            return rp
        return bool(rp.can_fetch(canon, self.policy.agent))

    def _read_robots(self, host: _Host, exchanges: list[Exchange]) -> Any:
        try:
            from protego import Protego
        except ImportError:  # pragma: no cover - protego comes with the web extra
            raise ImportError("robots.txt parsing needs protego: pip install 'gym-crawl[web]'") from None
        url = host.origin + "/robots.txt"
        for _ in range(ROBOTS_MAX_REDIRECTS + 1):
            h = self._host(url)
            ex = self._exchange(h, url, "robots", exchanges)
            if ex.status is None:
                return False  # timeout / connection error: disallow all
            location = ex.header("location")
            if ex.status in REDIRECT_STATUSES and location:
                nxt = canonical_url(location, base=url)
                if nxt is None:
                    return True
                url = nxt
                continue
            if ex.status == 429 or ex.status >= 500:
                return False
            if ex.status >= 400:
                return True
            if 200 <= ex.status < 300:
                rp = Protego.parse(ex.body[:self.policy.robots_max_bytes].decode("utf-8", errors="replace"))
                cd = rp.crawl_delay(self.policy.agent)
                rr = rp.request_rate(self.policy.agent)
                extra = max(float(cd or 0.0), rr.seconds / rr.requests if rr and rr.requests else 0.0)
                old = host.delay
                host.delay = max(host.delay, min(extra, self.policy.max_crawl_delay))
                if h is host:  # the robots.txt response itself starts the longer wait
                    host.next_time += host.delay - old
                return rp
            return True  # 1xx / other 3xx: as Google, treat as no robots.txt
        return True  # too many redirects: as a 404

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
            ex.error = "connect" if isinstance(e, NewConnectionError) else "timeout"
            return ex
        except ReadTimeoutError:
            ex.error = "timeout"
            return ex
        except (urllib3.exceptions.HTTPError, OSError):
            ex.error = "connect"
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
            except ReadTimeoutError:
                ex.truncated, ex.error = "time", "timeout"
            except (urllib3.exceptions.HTTPError, OSError):
                ex.truncated, ex.error = "disconnect", "connect"
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
                charset = charset or sniff_charset(body)
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


def _peer_ip(resp: Any) -> str | None:
    try:
        sock = resp.connection.sock
        return str(sock.getpeername()[0])
    except (AttributeError, OSError, IndexError, TypeError):
        return None


def policy_json(policy: FetchPolicy) -> str:
    """The policy as one JSON line (sorted keys)."""
    return json.dumps(policy.to_dict(), sort_keys=True)
