"""The misbehaviours of the test site: robots.txt rules and crawl-delay, error statuses with
``Retry-After``, redirect chains and loops, slow, oversize and non-HTML pages, broken HTML, mixed
encodings and crawler traps (:data:`MISBEHAVIOURS`), with the response builders they use.
"""
from __future__ import annotations

import bz2
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from gym_crawl.web.serve.site import Raw, Response, Route, Series, html_page, redirect

__all__ = ["MISBEHAVIOURS", "MisbehaveSettings", "calendar_trap", "raw_response", "robots_txt"]


def raw_response(status: int, headers: Iterable[tuple[str, str | bytes]] = (), body: bytes = b"", *,
                 reason: str = "", informational: Iterable[int] = (), length: bool = True) -> bytes:
    """The bytes of an HTTP/1.1 response as they go on the wire (for :class:`Raw`): ``informational`` 1xx
    replies first, then the status line, ``headers`` (a ``bytes`` value is written as it is, e.g. raw UTF-8),
    ``Content-Length`` (unless ``length`` is false or a header gives it) and ``Connection: close``, and
    ``body``."""
    out = bytearray()
    for code in informational:
        out += f"HTTP/1.1 {code} Informational\r\nLink: </style.css>; rel=preload\r\n\r\n".encode()
    out += f"HTTP/1.1 {status} {reason or 'Status'}\r\n".encode()
    names = set()
    for k, v in headers:
        names.add(k.lower())
        out += k.encode("latin-1") + b": " + (v if isinstance(v, bytes) else v.encode("latin-1")) + b"\r\n"
    if length and "content-length" not in names and "transfer-encoding" not in names:
        out += f"Content-Length: {len(body)}\r\n".encode()
    out += b"Connection: close\r\n\r\n" + body
    return bytes(out)

def robots_txt(disallow: Iterable[str] = (), *, allow: Iterable[str] = (), crawl_delay: float | None = None,
               agent: str = "*", extra: str = "") -> Response:
    """A robots.txt response for ``agent`` with ``Disallow``/``Allow`` rules and an optional ``Crawl-delay``."""
    lines = [f"User-agent: {agent}"] + [f"Allow: {a}" for a in allow] + [f"Disallow: {d}" for d in disallow]
    if crawl_delay is not None:
        lines.append(f"Crawl-delay: {crawl_delay:g}")
    text = "\n".join(lines) + "\n" + (extra + "\n" if extra else "")
    return Response(text.encode(), content_type="text/plain")


def calendar_trap(prefix: str = "/calendar/") -> Callable[[str], Response | None]:
    """A route serving ``<prefix><year>/<month>/`` pages forever, each linking to the next and previous
    month: the classic crawler trap (mount it at ``prefix + "*"``)."""

    def route(target: str) -> Response | None:
        path = urlsplit(target).path
        parts = [p for p in path[len(prefix):].split("/") if p]
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return None
        y, m = int(parts[0]), int(parts[1])
        if not 1 <= m <= 12:
            return None
        ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
        py, pm = (y - 1, 12) if m == 1 else (y, m - 1)
        body = html_page(f"Events of {y}-{m:02d}", "<p>No events this month.</p>",
                         [(f"{prefix}{ny}/{nm}/", "next month"), (f"{prefix}{py}/{pm}/", "previous month")])
        return Response(body)

    return route


@dataclass(frozen=True)
class MisbehaveSettings:
    """Parameters of the :data:`MISBEHAVIOURS` (small defaults keep tests fast).

    :param crawl_delay: ``Crawl-delay`` of the ``"robots"`` robots.txt (``None``: none).
    :param retry_after: the ``Retry-After`` seconds of the 429/503 replies.
    :param slow_seconds: how long ``/slow.html`` waits before answering.
    :param oversize_bytes: size of ``/big.html``.
    :param redirect_hops: hops of the ``/redirect/1`` chain (``/redirect-long/1`` has ``redirect_hops + 6``).
    :param trickle_pace: seconds between the single bytes of ``/trickle-headers.html`` and
        ``/trickle-body.html``.
    """

    crawl_delay: float | None = None
    retry_after: int = 1
    slow_seconds: float = 2.0
    oversize_bytes: int = 3 * 1024 * 1024
    redirect_hops: int = 3
    trickle_pace: float = 0.5


_PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n")
_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                     "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def _misbehaviours() -> dict[str, Callable[[MisbehaveSettings], dict[str, Route]]]:
    def robots(s: MisbehaveSettings) -> dict[str, Route]:
        return {"/robots.txt": robots_txt(["/private/"], crawl_delay=s.crawl_delay),
                "/private/secret.html": html_page("Secret", "<p>robots.txt disallows this page.</p>")}

    def retry(status: int) -> Callable[[MisbehaveSettings], dict[str, Route]]:
        name = {429: "busy", 503: "unavailable"}[status]

        def f(s: MisbehaveSettings) -> dict[str, Route]:
            fail = Response(html_page(f"HTTP {status}"), status=status,
                            headers=(("Retry-After", str(s.retry_after)),))
            return {f"/{name}.html": Series(fail, Response(html_page(f"{name.title()} no more")))}
        return f

    def redirects(s: MisbehaveSettings) -> dict[str, Route]:
        out: dict[str, Route] = {}
        codes = [301, 302, 303, 307, 308]
        for i in range(1, s.redirect_hops + 1):
            nxt = f"/redirect/{i + 1}" if i < s.redirect_hops else "/landing.html"
            out[f"/redirect/{i}"] = redirect(nxt, codes[(i - 1) % len(codes)])
        long_hops = s.redirect_hops + 6
        for i in range(1, long_hops + 1):
            nxt = f"/redirect-long/{i + 1}" if i < long_hops else "/landing.html"
            out[f"/redirect-long/{i}"] = redirect(nxt)
        out["/landing.html"] = html_page("Landing", "<p>The end of the redirect chain.</p>")
        return out

    def encodings(s: MisbehaveSettings) -> dict[str, Route]:
        text = "Café crème brûlée, naïve façade"
        body = f"<p>{text}</p>"
        return {
            "/latin1.html": Response(html_page("Latin-1 declared", body, charset="latin-1", meta_charset=None),
                                     content_type="text/html; charset=iso-8859-1"),
            "/latin1-undeclared.html": Response(html_page("Latin-1 undeclared", body, charset="latin-1",
                                                          meta_charset=None), content_type="text/html"),
            "/utf8-wrong-meta.html": Response(html_page("UTF-8 with a wrong meta", body, charset="utf-8",
                                                        meta_charset="iso-8859-1"), content_type="text/html"),
        }

    def protocol(s: MisbehaveSettings) -> dict[str, Route]:
        page = html_page("After early hints", "<p>The page after a 103 reply.</p>")
        target = html_page("Umlaut", "<p>Reached through a raw UTF-8 Location header.</p>")
        return {
            "/early-hints.html": Raw(raw_response(200, [("Content-Type", "text/html; charset=utf-8")], page,
                                                  informational=[103])),
            "/utf8-redirect": Raw(raw_response(302, [("Location", "/bücher/ü.html".encode())]), status=302),
            "/b%C3%BCcher/%C3%BC.html": Response(target),
            "/search?q=a%20b": Response(html_page("Search", "<p>The query as written: q=a%20b.</p>")),
        }

    def codings(s: MisbehaveSettings) -> dict[str, Route]:
        page = html_page("Compressed", "<p>A page in a coding the crawler did not ask for.</p>")
        return {
            "/bzip2.html": Response(bz2.compress(page), headers=(("Content-Encoding", "bzip2"),)),
            "/zstd.html": Response(b"\x28\xb5\x2f\xfd" + page, headers=(("Content-Encoding", "zstd"),)),
            "/unknown-coding.html": Response(page, headers=(("Content-Encoding", "x-secret"),)),
        }

    def trickle(s: MisbehaveSettings) -> dict[str, Route]:
        page = html_page("Trickle", "<p>One byte at a time.</p>")
        head = raw_response(200, [("Content-Type", "text/html")], page)
        split = head.index(b"\r\n\r\n") + 4
        return {"/trickle-headers.html": Raw(head, pace=s.trickle_pace, piece=1, status=200),
                "/trickle-body.html": Raw(head[:split] + page, pace=s.trickle_pace, piece=1, status=200)}

    return {
        "protocol": protocol,
        "codings": codings,
        "trickle": trickle,
        "robots": robots,
        "404": lambda s: {"/missing.html": Response(html_page("Not found"), status=404)},
        "500": lambda s: {"/error.html": Response(html_page("Server error"), status=500)},
        "429": retry(429),
        "503": retry(503),
        "redirects": redirects,
        "redirect-loop": lambda s: {"/loop/a": redirect("/loop/b"), "/loop/b": redirect("/loop/a")},
        "slow": lambda s: {"/slow.html": Response(html_page("Slow"), delay=s.slow_seconds)},
        "oversize": lambda s: {"/big.html": Response(
            html_page("Big", "<p>" + "x" * max(0, s.oversize_bytes - 200) + "</p>"))},
        "non-html": lambda s: {"/doc.pdf": Response(_PDF, content_type="application/pdf"),
                               "/image.png": Response(_PNG, content_type="image/png")},
        "broken-html": lambda s: {
            "/broken.html": Response(b"<html><head><title>Broken</head><body><p>unclosed <b><i>tags"
                                     b"<a href='/'>home<div><table><tr><td>cell</p></b>\x00\xff</a"),
            "/untyped.html": Response(html_page("No Content-Type"), content_type=None)},
        "encodings": encodings,
        "calendar": lambda s: {"/calendar/2026/11/": calendar_trap()("/calendar/2026/11/"),  # type: ignore[dict-item]
                               "/calendar/*": calendar_trap()},
        "path-trap": lambda s: {"/deep/": _deep_page, "/deep/*": _deep_page},
        "session-ids": lambda s: {"/session": _session_page},
    }


def _deep_page(target: str) -> Response | None:
    """Any ``/deep/.../`` folder links to its relative ``more/``: ``/deep/more/more/more/...`` forever."""
    path = urlsplit(target).path
    if not path.endswith("/"):
        return None
    return Response(html_page(f"Deep {path.count('/') - 2}", "<p>Further down.</p>", [("more/", "more")]))


def _session_page(target: str) -> Response:
    """``/session?sid=X`` links to ``/session?sid=Y``, a new id derived from ``X`` (a session-id trap: every
    page a new URL, the same links on every visit)."""
    sid = urlsplit(target).query.partition("sid=")[2].partition("&")[0] or "start"
    nxt = hashlib.sha1(sid.encode()).hexdigest()[:8]
    return Response(html_page(f"Session {sid}", "<p>Welcome back.</p>", [(f"/session?sid={nxt}", "continue")]))


MISBEHAVIOURS = _misbehaviours()
"""Named misbehaviours, each ``settings -> {path: route}``: ``robots`` (``/robots.txt`` disallowing
``/private/``, optional crawl-delay), ``404`` (``/missing.html``), ``500`` (``/error.html``), ``429``
(``/busy.html``) and ``503`` (``/unavailable.html``) with ``Retry-After`` once then 200, ``redirects``
(``/redirect/1`` → … → ``/landing.html`` and a longer ``/redirect-long/1`` chain), ``redirect-loop``
(``/loop/a`` ↔ ``/loop/b``), ``slow`` (``/slow.html``), ``oversize`` (``/big.html``), ``non-html``
(``/doc.pdf``, ``/image.png``), ``broken-html`` (``/broken.html``, ``/untyped.html`` without a
Content-Type), ``encodings`` (``/latin1.html`` declared, ``/latin1-undeclared.html``,
``/utf8-wrong-meta.html``), ``calendar`` (``/calendar/2026/11/`` → next month forever), ``path-trap``
(``/deep/`` → relative ``more/`` forever), ``session-ids`` (``/session`` → ``/session?sid=<new id>``
forever), ``protocol`` (``/early-hints.html``: a ``103`` before the ``200``; ``/utf8-redirect``: a
``Location`` in raw UTF-8 bytes to ``/bücher/ü.html``; ``/search?q=a%20b``, served only with ``%20``),
``codings`` (``/bzip2.html``, ``/zstd.html``, ``/unknown-coding.html``: content codings the crawler did not
ask for), ``trickle`` (``/trickle-headers.html``, ``/trickle-body.html``: one byte every
``trickle_pace`` seconds)."""


