"""What a polite crawl may fetch: :class:`FetchPolicy` (politeness, limits, scope, trap guards) and the
checks that depend on a URL alone (:func:`in_scope`, :func:`trap_reason`, :func:`url_pattern`).

:class:`~gym_crawl.web.fetcher.PoliteFetcher` applies a policy; the module docstring of
:mod:`gym_crawl.web.fetcher` says in which order.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from gym_crawl._io import dataclass_kwargs

__all__ = ["POLICY_BOUNDS", "ROBOTS_TOKEN", "FetchPolicy", "default_user_agent", "header_value_problem", "in_scope",
           "origin", "scope_entry", "trap_reason", "url_pattern"]

ROBOTS_TOKEN = "gym_crawl"
"""The product token robots.txt ``User-agent`` lines match (the User-Agent header starts with it)."""

_DIGITS = re.compile(r"\d+")
_HOUR, _DAY = 3600.0, 86400.0
POLICY_BOUNDS: dict[str, tuple[type, float, float]] = {
    "delay": (float, 0.0, _HOUR), "max_crawl_delay": (float, 0.0, _HOUR), "rate": (float, 0.01, 10_000.0),
    "connect_timeout": (float, 0.001, _HOUR), "read_timeout": (float, 0.001, _HOUR), "max_time": (float, 0.001, _DAY),
    "max_bytes": (int, 1, 1 << 30), "max_redirects": (int, 0, 100), "max_retries": (int, 0, 100),
    "backoff": (float, 0.0, _HOUR), "max_retry_after": (float, 0.0, _DAY), "max_url_length": (int, 1, 16_384),
    "max_path_depth": (int, 1, 10_000), "max_query_params": (int, 0, 10_000), "max_repeated_segments": (int, 1, 10_000),
    "max_pages_per_pattern": (int, 1, 1_000_000_000), "max_pages_per_host": (int, 1, 1_000_000_000),
    "robots_max_bytes": (int, 1, 64 << 20), "robots_ttl": (float, 0.0, 365 * _DAY),
    "robots_retry": (float, 0.0, 30 * _DAY),
}
"""The valid range of each numeric :class:`FetchPolicy` field, ``name: (type, low, high)`` inclusive: an ``int``
field takes integers only (``max_bytes=1.5`` is refused), a ``float`` one any finite real number (not ``bool``).
``rate`` may also be ``None`` (no global limit), ``max_pages_per_pattern`` / ``max_pages_per_host`` ``None`` (no
cap). The bounds keep every wait finite and every buffer allocatable: an hour between requests to a host, a
request rate of one per 100 s, a day per fetch, 1 GiB per page."""
MAX_HEADER_VALUE = 1024
"""Characters of a ``user_agent`` / ``contact`` (a User-Agent header longer than this is refused)."""
_HEADER_VALUE = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def header_value_problem(value: object) -> str | None:
    """What keeps ``value`` from being sent as an HTTP header value (RFC 9110 §5.5 ``field-value``, kept to
    printable ASCII: visible characters and spaces inside), or ``None``: not a string, empty, a control character
    (NUL, CR, LF, ``\x01`` …), a non-ASCII character, space at either end, or longer than
    :data:`MAX_HEADER_VALUE`."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "must not be empty"
    if len(value) > MAX_HEADER_VALUE:
        return f"must be at most {MAX_HEADER_VALUE} characters, got {len(value)}"
    bad = next((c for c in value if not 0x20 <= ord(c) <= 0x7E), None)
    if bad is not None:
        return f"must be printable ASCII (an HTTP header value), got {bad!r} in {value!r}"
    if not _HEADER_VALUE.fullmatch(value):
        return f"must not start or end with a space, got {value!r}"
    return None
_DEFAULT_PORTS = {"http": 80, "https": 443}


def default_user_agent(contact: str | None = None) -> str:
    """``gym_crawl/<version>`` with ``(+<contact>)`` appended when a contact URL is given."""
    from gym_crawl import __version__

    return f"{ROBOTS_TOKEN}/{__version__}" + (f" (+{contact})" if contact else "")


@dataclass(frozen=True)
class FetchPolicy:
    """How politely and how far :class:`~gym_crawl.web.fetcher.PoliteFetcher` fetches. Every field has a
    safe default; every numeric field is typed and bounded (:data:`POLICY_BOUNDS`: ``max_bytes=1.5`` or
    ``rate=1e-9`` is a ``ValueError`` naming the field and its range) and ``user_agent`` / ``contact`` must be
    HTTP header values (:func:`header_value_problem`: printable ASCII, no control character, CR or LF).

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
    :param allowed_hosts: the origins (scheme, host, port) the crawl may fetch, each written as
        ``"http://example.org:8080"`` (that origin), ``"example.org:8080"`` (that host and port, over http and
        https) or ``"example.org"`` (that host on the default ports: ``http://example.org`` and
        ``https://example.org``); empty = any host; default ``()``. A link and a redirect are checked by the
        same rule (:func:`in_scope`).
    :param allowed_domains: registrable domains whose hosts and sub-hosts may be fetched
        (``"example.org"`` admits ``www.example.org``), on the default ports unless the entry names one
        (``"example.org:8080"``, or with a scheme as in ``allowed_hosts``); empty = any; default ``()``. When
        both ``allowed_hosts`` and ``allowed_domains`` are given, a URL in either is in scope.
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
    :param robots_ttl: seconds a robots.txt is reused before it is fetched again (Google caches it up to a
        day); default ``86400.0``.
    :param robots_retry: seconds after which an origin whose robots.txt was unreachable (429, 5xx, timeout,
        connection error — everything disallowed meanwhile) is asked again; default ``600.0``.
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
    robots_ttl: float = 86400.0
    robots_retry: float = 600.0

    def __post_init__(self) -> None:
        for name in ("allowed_hosts", "allowed_domains", "allow_patterns", "deny_patterns", "content_types"):
            v = getattr(self, name)
            if isinstance(v, str):
                raise TypeError(f"FetchPolicy.{name} must be a sequence of strings, got the string {v!r}")
            object.__setattr__(self, name, tuple(v))
        for name in ("allowed_hosts", "allowed_domains"):
            for entry in getattr(self, name):
                try:
                    scope_entry(entry)
                except ValueError as e:
                    raise ValueError(f"FetchPolicy.{name}: {e}") from None
        for name, (kind, lo, hi) in POLICY_BOUNDS.items():
            v = getattr(self, name)
            if v is None and name in ("rate", "max_pages_per_pattern", "max_pages_per_host"):
                continue
            ok = isinstance(v, (int, float) if kind is float else int) and not isinstance(v, bool)
            if not ok or not (lo <= v <= hi):
                what = "an integer" if kind is int else "a number"
                none = " or None" if name in ("rate", "max_pages_per_pattern", "max_pages_per_host") else ""
                raise ValueError(f"FetchPolicy.{name} must be {what} from {_num(lo)} to {_num(hi)}{none}, got {v!r}")
        for name in ("user_agent", "contact"):
            v = getattr(self, name)
            problem = header_value_problem(v) if v is not None else None
            if problem is not None:
                raise ValueError(f"FetchPolicy.{name} {problem}")
        for t in self.content_types:
            if not isinstance(t, str) or not re.fullmatch(r"[a-z0-9!#$&^_.+-]+/[a-z0-9!#$&^_.+-]+", t):
                raise ValueError(f"FetchPolicy.content_types: {t!r} is not a lowercase media type (text/html)")
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
        return cls(**dataclass_kwargs(cls, d))


def origin(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an ``http(s)`` URL — the port made explicit, the host lowercased — or
    ``None`` when it has none."""
    try:
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:
        return None
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host.lower().rstrip("."), port if port is not None else _DEFAULT_PORTS[scheme]


@lru_cache(maxsize=4096)
def scope_entry(entry: str) -> tuple[tuple[str, ...], str, tuple[int, ...] | None]:
    """``(schemes, host, ports)`` an ``allowed_hosts`` / ``allowed_domains`` entry stands for (see
    :class:`FetchPolicy`): ``"http://h:8080"`` → ``(("http",), "h", (8080,))``, ``"h:8080"`` →
    ``(("http", "https"), "h", (8080,))``, ``"h"`` → ``(("http", "https"), "h", None)`` where ``None``
    means each scheme's default port. ``ValueError`` naming the entry when it is not one."""
    if not isinstance(entry, str) or not entry.strip():
        raise ValueError(f"scope entry {entry!r} is not a host, host:port or origin")
    text = entry.strip()
    try:
        if "://" in text:
            parts = urlsplit(text)
            scheme = parts.scheme.lower()
            if scheme not in _DEFAULT_PORTS or parts.path not in ("", "/") or parts.query or not parts.hostname:
                raise ValueError
            return (scheme,), parts.hostname.lower().rstrip("."), (parts.port or _DEFAULT_PORTS[scheme],)
        parts = urlsplit("//" + text)
        if not parts.hostname or parts.path or parts.query or parts.fragment or parts.username:
            raise ValueError
        port = parts.port
    except ValueError:
        raise ValueError(f"scope entry {entry!r} is not a host (example.org), host:port (example.org:8080) or "
                         f"origin (https://example.org)") from None
    return ("http", "https"), parts.hostname.lower().rstrip("."), (port,) if port is not None else None


def _entry_admits(entry: str, o: tuple[str, str, int], domain: bool) -> bool:
    schemes, host, ports = scope_entry(entry)
    scheme, h, port = o
    if scheme not in schemes or port != (_DEFAULT_PORTS[scheme] if ports is None else ports[0]):
        return False
    return h == host or (domain and h.endswith("." + host))


def in_scope(policy: FetchPolicy, canon: str) -> bool:
    """Whether the URL ``canon`` is within the policy's origins/domains and URL patterns — the one rule for
    links and redirects: the URL's origin (scheme, host, port) must be one an ``allowed_hosts`` entry
    stands for, or a host under an ``allowed_domains`` entry on its port (see :class:`FetchPolicy`)."""
    if policy.allowed_hosts or policy.allowed_domains:
        o = origin(canon)
        if o is None:
            return False
        if not (any(_entry_admits(e, o, False) for e in policy.allowed_hosts)
                or any(_entry_admits(e, o, True) for e in policy.allowed_domains)):
            return False
    if policy.allow_patterns and not any(re.search(p, canon) for p in policy.allow_patterns):
        return False
    return not any(re.search(p, canon) for p in policy.deny_patterns)


def trap_reason(policy: FetchPolicy, canon: str) -> str | None:
    """The trap guard the canonical URL ``canon`` trips (``"trap:url-length"``, ``"trap:path-depth"``,
    ``"trap:query-params"``, ``"trap:repeated-segment"``), or ``None``. The URL-pattern and per-host caps
    depend on the crawl so far and are the fetcher's."""
    if len(canon) > policy.max_url_length:
        return "trap:url-length"
    parts = urlsplit(canon)
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) > policy.max_path_depth:
        return "trap:path-depth"
    if len(parse_qsl(parts.query, keep_blank_values=True)) > policy.max_query_params:
        return "trap:query-params"
    if segments and max(Counter(segments).values()) > policy.max_repeated_segments:
        return "trap:repeated-segment"
    return None


def url_pattern(url: str) -> str:
    """The URL with digit runs replaced by ``#`` and query values dropped (the trap-pattern key)."""
    parts = urlsplit(url)
    keys = "&".join(sorted(k for k, _ in parse_qsl(parts.query, keep_blank_values=True)))
    return _DIGITS.sub("#", f"{parts.scheme}://{parts.netloc}{parts.path}") + (f"?{keys}" if keys else "")
