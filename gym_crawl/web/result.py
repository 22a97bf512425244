"""What a fetch returns: :class:`Exchange` (one HTTP request/response as sent and received) and
:class:`FetchResult` (the outcome of one ``PoliteFetcher.fetch``, every redirect hop and retry included),
with the header and charset helpers both use.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from gym_crawl.web.policy import ROBOTS_TOKEN

__all__ = ["FETCH_ERRORS", "Exchange", "FetchResult", "Recorder", "header_text", "looks_like_html",
           "parse_content_type", "sniff_charset"]

FETCH_ERRORS = ("robots", "out-of-scope", "trap:url-length", "trap:path-depth", "trap:query-params",
                "trap:repeated-segment", "trap:pattern", "host-cap", "timeout", "connect", "http-<code>",
                "too-large", "content-type", "content-encoding", "decode", "redirect-limit", "redirect-loop",
                "cancelled")
"""Every value :attr:`FetchResult.error` can take (``"http-<code>"`` stands for ``"http-404"`` etc.)."""

_META_ROBOTS = re.compile(rb"<meta\b([^>]*)>", re.IGNORECASE)
_ATTR = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_DIRECTIVES = frozenset({"all", "noindex", "nofollow", "none", "noarchive", "nosnippet", "notranslate",
                         "noimageindex", "unavailable_after", "max-snippet", "max-image-preview", "max-video-preview",
                         "indexifembedded"})
_HTML_START = re.compile(rb"^\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE | re.DOTALL)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.IGNORECASE)


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
    detail: str | None = None
    """The exception behind ``error`` (type and message), for diagnosis."""
    sent: bool = True
    """False when no connection was made (so the request never left)."""
    decoded: bool = True
    """False when the body was not read because its ``Content-Encoding`` is one the fetcher does not undo
    (the headers then still describe the encoded body)."""

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
    :param charset: the encoding the page declares: its byte-order mark, else the ``Content-Type``
        header's charset, else a ``<meta charset>`` in the first 4 KiB (the label as written, lowercased;
        ``None`` when undeclared). :attr:`text` decodes accordingly.
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
        """The body decoded by :func:`gym_crawl.web.html_extract.decode_html` with this response's
        ``Content-Type`` — the decoding the WARC compiler applies to the same bytes (a byte-order mark, else
        the header's charset, else a ``<meta charset>``, else UTF-8; browsers' label mapping)."""
        from gym_crawl.web.html_extract import decode_html

        ctype = next((v for k, v in self.headers if k.lower() == "content-type"), None)
        return decode_html(self.body, ctype)

    @property
    def robots_directives(self) -> frozenset[str]:
        """The page's own robots directives, lowercased: the ``X-Robots-Tag`` headers and the
        ``<meta name="robots">`` / ``<meta name="gym_crawl">`` tags of its first 64 KiB (``"nofollow"``,
        ``"noindex"``, ``"none"``, ...; a header scoped to another crawler, ``X-Robots-Tag: otherbot:
        noindex``, is left out). A crawler honouring them follows no link of a ``nofollow``/``none`` page."""
        out: set[str] = set()
        for k, v in self.headers:
            if k.lower() == "x-robots-tag":
                agent, sep, rest = v.partition(":")
                agent = agent.strip().lower()
                if sep and agent not in _DIRECTIVES and not any(c in agent for c in " ,"):  # "bot: directives"
                    if agent != ROBOTS_TOKEN:
                        continue
                    v = rest
                out.update(d.strip().lower() for d in v.split(",") if d.strip())
        for m in _META_ROBOTS.finditer(self.body[:65536]):
            attrs = {a.lower(): (v1 or v2 or v3) for a, v1, v2, v3 in _ATTR.findall(m.group(1))}
            name = attrs.get(b"name", b"").strip().lower()
            if name in (b"robots", ROBOTS_TOKEN.encode()):
                out.update(d.strip().lower() for d in attrs.get(b"content", b"").decode("ascii", "replace").split(",")
                           if d.strip())
        return frozenset(out)

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


def looks_like_html(body: bytes) -> bool:
    """Whether a body sent without a ``Content-Type`` is HTML: its first KiB (after a UTF-8 byte-order mark)
    starts with a doctype, ``<html>``, ``<head>`` or ``<body>`` (comments and white space before it allowed)
    — how the fetcher and the WARC compiler both decide."""
    return bool(_HTML_START.match(body[:1024].lstrip(b"\xef\xbb\xbf")))


def header_text(value: str | None) -> str | None:
    """A header value as its sender meant it: HTTP headers arrive as bytes that ``http.client`` decodes as
    ISO-8859-1, while servers write non-ASCII URLs (a ``Location``) in UTF-8, as browsers read them — so a
    value whose bytes are valid UTF-8 is decoded as UTF-8, anything else is kept as it is."""
    if value is None or value.isascii():
        return value
    try:
        return value.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return value


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
