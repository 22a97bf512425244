"""A threaded HTTP site on loopback, serving several hosts, that can misbehave on purpose.

The site the live crawler is tested and demonstrated against. Each *host* is its own loopback address with
one shared port (``http://127.0.0.2:PORT/``, ``http://127.0.0.3:PORT/``, ...), so hosts differ in the URL as
on the real web; where those addresses cannot be bound, the hosts are distinct ports of ``127.0.0.1``.
Only 127.0.0.0/8 is ever bound.

* :func:`serve_site` serves ``{host label: {path: route}}``: a route is the page bytes (``text/html``), a
  :class:`Response` (status, headers, content type, delays), a :class:`Series` of responses served in turn,
  or a function of the request path; a path ending in ``*`` is a prefix route. ``misbehave`` adds the
  named misbehaviours of :data:`MISBEHAVIOURS` to a host (robots.txt rules and crawl-delay, 404, 500, 429
  and 503 with ``Retry-After``, redirect chains and loops, a slow page, an oversize page, PDF and PNG,
  broken HTML, mixed encodings, an infinite calendar) and an index page at ``/`` linking to everything.
* :func:`serve_corpus` serves a compiled :class:`~gym_crawl.corpus.core.Corpus` as a website, one page per
  path derived from its title, spread over hosts by domain.
* :func:`serve_folder` serves folders of static files (saved or installed HTML documentation) as hosts.

Every request is logged (:class:`LoggedRequest`: arrival and end time, host, path, method, the id of the
TCP connection it came on, status, bytes written, User-Agent), so tests assert politeness from the
server's side. The returned :class:`Site` is a context manager; leaving it stops every server.
"""
from __future__ import annotations

import html
import itertools
import mimetypes
import os
import posixpath
import select
import socket
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Union
from urllib.parse import quote, unquote, urlsplit

__all__ = [
    "MISBEHAVIOURS",
    "LoggedRequest",
    "MisbehaveSettings",
    "Response",
    "Series",
    "Site",
    "add_serve_arguments",
    "calendar_trap",
    "corpus_page_html",
    "corpus_paths",
    "html_page",
    "robots_txt",
    "serve_command",
    "serve_corpus",
    "serve_folder",
    "serve_site",
]

Route = Union[bytes, str, "Response", "Series", Callable[[str], Union["Response", None]]]
_POLL = 0.01


@dataclass(frozen=True)
class Response:
    """One HTTP response the site sends.

    :param body: the body bytes.
    :param status: the HTTP status.
    :param content_type: the ``Content-Type`` header (``None``: none is sent).
    :param headers: further headers, ``((name, value), ...)``.
    :param delay: seconds to wait before the status line (a slow server; the wait ends early when the
        client hangs up).
    :param trickle: seconds to wait between body chunks.
    :param chunk: bytes per body write.
    """

    body: bytes = b""
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    trickle: float = 0.0
    chunk: int = 65536


class Series:
    """Responses served in turn, one per request to the route; the last one repeats."""

    def __init__(self, *responses: Response):
        if not responses:
            raise ValueError("Series needs at least one Response")
        self.responses = responses
        self._n = 0
        self._lock = threading.Lock()

    def next(self) -> Response:
        with self._lock:
            r = self.responses[min(self._n, len(self.responses) - 1)]
            self._n += 1
            return r


@dataclass
class LoggedRequest:
    """One request as the site saw it. ``start``/``end`` are ``time.monotonic()`` seconds: arrival of the
    request line / just before the response's last byte was written (or when the site noticed that the
    client hung up: ``client_closed``)."""

    start: float
    end: float
    host: str
    path: str
    method: str
    conn: int
    status: int
    bytes_sent: int
    user_agent: str
    client_closed: bool = False


def html_page(title: str, body_html: str = "", links: Iterable[tuple[str, str]] = (), charset: str = "utf-8",
              meta_charset: str | None = "utf-8") -> bytes:
    """A small HTML page: title, body HTML and a list of ``(href, anchor text)`` links, encoded in ``charset``."""
    items = "".join(f'<li><a href="{html.escape(h)}">{html.escape(a)}</a></li>' for h, a in links)
    meta = f'<meta charset="{meta_charset}">' if meta_charset else ""
    doc = (f"<!DOCTYPE html>\n<html><head>{meta}<title>{html.escape(title)}</title></head>"
           f"<body><h1>{html.escape(title)}</h1>{body_html}<ul>{items}</ul></body></html>\n")
    return doc.encode(charset, errors="xmlcharrefreplace")


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

    def route(path: str) -> Response | None:
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
    """

    crawl_delay: float | None = None
    retry_after: int = 1
    slow_seconds: float = 2.0
    oversize_bytes: int = 3 * 1024 * 1024
    redirect_hops: int = 3


_PDF = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\n"
        b"trailer<</Root 1 0 R>>\n%%EOF\n")
_PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000"
                     "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082")


def _redirect(location: str, status: int = 302) -> Response:
    return Response(b"", status=status, content_type=None, headers=(("Location", location),))


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
            out[f"/redirect/{i}"] = _redirect(nxt, codes[(i - 1) % len(codes)])
        long_hops = s.redirect_hops + 6
        for i in range(1, long_hops + 1):
            nxt = f"/redirect-long/{i + 1}" if i < long_hops else "/landing.html"
            out[f"/redirect-long/{i}"] = _redirect(nxt)
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

    return {
        "robots": robots,
        "404": lambda s: {"/missing.html": Response(html_page("Not found"), status=404)},
        "500": lambda s: {"/error.html": Response(html_page("Server error"), status=500)},
        "429": retry(429),
        "503": retry(503),
        "redirects": redirects,
        "redirect-loop": lambda s: {"/loop/a": _redirect("/loop/b"), "/loop/b": _redirect("/loop/a")},
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
    }


MISBEHAVIOURS = _misbehaviours()
"""Named misbehaviours, each ``settings -> {path: route}``: ``robots`` (``/robots.txt`` disallowing
``/private/``, optional crawl-delay), ``404`` (``/missing.html``), ``500`` (``/error.html``), ``429``
(``/busy.html``) and ``503`` (``/unavailable.html``) with ``Retry-After`` once then 200, ``redirects``
(``/redirect/1`` → … → ``/landing.html`` and a longer ``/redirect-long/1`` chain), ``redirect-loop``
(``/loop/a`` ↔ ``/loop/b``), ``slow`` (``/slow.html``), ``oversize`` (``/big.html``), ``non-html``
(``/doc.pdf``, ``/image.png``), ``broken-html`` (``/broken.html``, ``/untyped.html`` without a
Content-Type), ``encodings`` (``/latin1.html`` declared, ``/latin1-undeclared.html``,
``/utf8-wrong-meta.html``), ``calendar`` (``/calendar/2026/11/`` → next month forever)."""


# ---------------------------------------------------------------------- server
class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, addr: tuple[str, int], site: Site, label: str):
        self.site = site
        self.label = label
        super().__init__(addr, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up (reset, broken pipe, idle timeout) is normal for a crawler; the rest is printed."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gym-crawl-test-site"
    timeout = 10  # an idle keep-alive connection is closed after this many seconds
    disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.conn_id = self.server.site._next_conn()

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_HEAD(self) -> None:
        self._serve(head=True)

    def do_GET(self) -> None:
        self._serve(head=False)

    def _client_gone(self) -> bool:
        try:
            r, _, _ = select.select([self.connection], [], [], 0)
            return bool(r) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _serve(self, head: bool) -> None:
        start = time.monotonic()
        site = self.server.site
        try:
            resp = site._resolve(self.server.label, self.path)
        except Exception as e:  # noqa: BLE001 - a failing route function: answer 500 naming the error
            resp = Response(f"route error: {type(e).__name__}: {e}".encode(), status=500, content_type="text/plain")
        entry = LoggedRequest(start, start, self.server.label, self.path, self.command, self.conn_id, resp.status, 0,
                              self.headers.get("User-Agent", ""))
        site._log_request(entry)  # logged on arrival; ``end`` and ``bytes_sent`` are filled in as it is served
        try:
            deadline = start + resp.delay
            while time.monotonic() < deadline:
                if self._client_gone():
                    entry.client_closed = True
                    self.close_connection = True
                    return
                time.sleep(min(_POLL, max(0.0, deadline - time.monotonic())))
            self.send_response(resp.status)
            if resp.content_type is not None:
                self.send_header("Content-Type", resp.content_type)
            for k, v in resp.headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(resp.body)))
            body = b"" if head else resp.body
            if not body:
                entry.end = time.monotonic()  # before the last byte leaves: the client cannot have it earlier
            self.end_headers()
            for i in range(0, len(body), resp.chunk):
                if i and resp.trickle:
                    time.sleep(resp.trickle)
                piece = body[i:i + resp.chunk]
                if i + resp.chunk >= len(body):
                    entry.end = time.monotonic()
                entry.bytes_sent += len(piece)  # counted first: the client may read the log once it has the bytes
                try:
                    self.wfile.write(piece)
                except OSError:
                    entry.bytes_sent -= len(piece)
                    raise
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            entry.client_closed = True
            self.close_connection = True
        finally:
            if entry.client_closed or entry.end == start:
                entry.end = time.monotonic()


def _bind(addresses: list[str], labels: list[str], site: Site, same_port: bool) -> list[_Server] | None:
    """One server per label on ``addresses`` (all on the first one's port when ``same_port``), or ``None``
    (and nothing left bound) when a bind fails."""
    servers: list[_Server] = []
    port = 0
    try:
        for addr, label in zip(addresses, labels):
            s = _Server((addr, port), site, label)
            servers.append(s)
            if same_port:
                port = s.server_address[1]
        return servers
    except OSError:
        for s in servers:
            s.server_close()
        return None


class Site:
    """Running HTTP servers, one per host label, with a shared request log.

    :param routes: ``{host label: {path: route}}`` (see the module docstring).
    :param bind: ``"auto"`` (distinct loopback addresses ``127.0.0.2``, ``127.0.0.3``, ... on one port, else
        distinct ports of ``127.0.0.1``), ``"addresses"`` or ``"ports"`` (only that layout).
    :param first_address: last byte of the first loopback address used (2 = ``127.0.0.2``).

    ``base_urls[label]`` is ``http://<address>:<port>`` (no trailing slash); ``url(label, path)`` builds a
    URL; ``log`` lists every :class:`LoggedRequest` in arrival order (a request is logged when it arrives,
    its ``end`` is set just before its last byte is written).
    """

    def __init__(self, routes: Mapping[str, Mapping[str, Route]], *, bind: str = "auto", first_address: int = 2):
        if not routes:
            raise ValueError("serve_site needs at least one host")
        if bind not in ("auto", "addresses", "ports"):
            raise ValueError(f"bind must be 'auto', 'addresses' or 'ports', got {bind!r}")
        labels = list(routes)
        if not 1 <= first_address <= 254 - len(labels):
            raise ValueError(f"first_address must be in [1, {254 - len(labels)}] for {len(labels)} hosts, "
                             f"got {first_address}")
        for label, rs in routes.items():
            for path, r in rs.items():
                if not (isinstance(r, (bytes, bytearray, str, Response, Series)) or callable(r)):
                    raise TypeError(f"route {path!r} of host {label!r} must be bytes, str, Response, Series or a "
                                    f"function of the path, got {type(r).__name__}")
        self._routes: dict[str, dict[str, Route]] = {k: dict(v) for k, v in routes.items()}
        self._prefixes = {k: sorted(((p[:-1], r) for p, r in v.items() if p.endswith("*")),
                                    key=lambda t: -len(t[0])) for k, v in self._routes.items()}
        self.log: list[LoggedRequest] = []
        self._log_lock = threading.Lock()
        self._conns = itertools.count(1)
        servers = None
        if bind in ("auto", "addresses"):
            addrs = [f"127.0.0.{first_address + i}" for i in range(len(labels))]
            for _ in range(8):  # another process may hold the port on one of the addresses: pick another
                servers = _bind(addrs, labels, self, same_port=True)
                if servers is not None:
                    break
        if servers is None and bind in ("auto", "ports"):
            servers = _bind(["127.0.0.1"] * len(labels), labels, self, same_port=False)
        if servers is None:
            raise OSError(f"cannot bind {len(labels)} hosts on loopback (bind={bind!r})")
        self._servers = servers
        self.base_urls: dict[str, str] = {
            s.label: f"http://{s.server_address[0]}:{s.server_address[1]}" for s in servers}
        self._threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05},
                                          name=f"site-{s.label}", daemon=True) for s in servers]
        for t in self._threads:
            t.start()
        self._closed = False
        self.page_urls: list[str] = []
        """Set by :func:`serve_corpus`: the URL of each corpus page (index = page id)."""

    # -------------------------------------------------------------- routing
    def _resolve(self, label: str, raw_path: str) -> Response:
        routes = self._routes[label]
        path = urlsplit(raw_path).path or "/"
        route = routes.get(raw_path, routes.get(path))
        if route is None:
            for prefix, r in self._prefixes[label]:
                if path.startswith(prefix):
                    route = r
                    break
        resp = _as_response(route, raw_path)
        return resp if resp is not None else Response(html_page("Not found"), status=404)

    def _next_conn(self) -> int:
        return next(self._conns)

    def _log_request(self, entry: LoggedRequest) -> None:
        with self._log_lock:
            self.log.append(entry)

    # -------------------------------------------------------------- queries
    @property
    def hosts(self) -> list[str]:
        """The host labels, in the order given."""
        return list(self.base_urls)

    def url(self, label: str, path: str = "/") -> str:
        """The absolute URL of ``path`` on host ``label``."""
        if label not in self.base_urls:
            raise KeyError(f"unknown host {label!r}; hosts: {self.hosts}")
        return self.base_urls[label] + (path if path.startswith("/") else "/" + path)

    def requests(self, host: str | None = None, path: str | None = None) -> list[LoggedRequest]:
        """Logged requests (to ``host`` / of exactly ``path`` when given), sorted by arrival."""
        with self._log_lock:
            out = [e for e in self.log if (host is None or e.host == host) and (path is None or e.path == path)]
        return sorted(out, key=lambda e: e.start)

    def max_concurrent(self, host: str) -> int:
        """The most requests to ``host`` the site was handling at one moment."""
        events = sorted([(e.start, 1) for e in self.requests(host)] + [(e.end, -1) for e in self.requests(host)],
                        key=lambda t: (t[0], t[1]))
        cur = best = 0
        for _, d in events:
            cur += d
            best = max(best, cur)
        return best

    # -------------------------------------------------------------- lifetime
    def close(self) -> None:
        """Stop every server (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for s in self._servers:
            s.shutdown()
        for s in self._servers:
            s.server_close()
        for t in self._threads:
            t.join(timeout=5)

    def __enter__(self) -> Site:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _as_response(route: Any, raw_path: str) -> Response | None:
    if route is None:
        return None
    if isinstance(route, Response):
        return route
    if isinstance(route, Series):
        return route.next()
    if isinstance(route, (bytes, bytearray)):
        return Response(bytes(route))
    if isinstance(route, str):
        return Response(route.encode("utf-8"))
    if callable(route):
        return _as_response(route(urlsplit(raw_path).path), raw_path)
    raise TypeError(f"route for {raw_path!r} must be bytes, str, Response, Series or a function, "
                    f"got {type(route).__name__}")


def _index(label: str, routes: Mapping[str, Route]) -> bytes:
    links = [(p, p) for p in sorted(routes) if not p.endswith("*") and p != "/robots.txt"]
    return html_page(f"{label} index", "<p>Every page of this host.</p>", links)


def serve_site(pages: Mapping[str, Mapping[str, Route]], *, misbehave: Mapping[str, Iterable[str]] | None = None,
               settings: MisbehaveSettings | None = None, bind: str = "auto", first_address: int = 2) -> Site:
    """Start a :class:`Site` serving ``pages`` (``{host label: {path: route}}``), each host on its own
    loopback address (see :class:`Site` for ``bind``/``first_address``).

    :param misbehave: ``{host label: names}`` — the :data:`MISBEHAVIOURS` to add to that host (its own
        routes win on a clash). A host given only here is served too.
    :param settings: parameters of the misbehaviours (default :class:`MisbehaveSettings`).

    A host without a ``/`` route gets an index page linking to all of its paths (prefix routes and
    robots.txt aside). Use as ``with serve_site(...) as site:``.
    """
    settings = settings or MisbehaveSettings()
    routes: dict[str, dict[str, Route]] = {k: dict(v) for k, v in pages.items()}
    for label, names in (misbehave or {}).items():
        if isinstance(names, str):
            raise TypeError(f"misbehave[{label!r}] must be a list of names, got the string {names!r}")
        extra: dict[str, Route] = {}
        for name in names:
            if name not in MISBEHAVIOURS:
                raise ValueError(f"unknown misbehaviour {name!r}; known: {sorted(MISBEHAVIOURS)}")
            extra.update(MISBEHAVIOURS[name](settings))
        routes[label] = {**extra, **routes.get(label, {})}
    for label, r in routes.items():
        if "/" not in r:
            r["/"] = _index(label, r)
    return Site(routes, bind=bind, first_address=first_address)


# ---------------------------------------------------------------------- a corpus as a site
def corpus_paths(corpus: Any) -> list[str]:
    """The path each page of ``corpus`` is served at by :func:`serve_corpus`: the path of
    :meth:`Corpus.url <gym_crawl.corpus.core.Corpus.url>` (``/wiki/<title>`` with spaces as ``_``, or
    ``/p/<id>`` on opaque-URL domains) in its canonical percent-encoding
    (:func:`~gym_crawl.corpus.urls.canonical_url`), so the page URLs are canonical; a path taken by an
    earlier page gets ``~<page id>`` appended."""
    from gym_crawl.corpus.urls import canonical_url

    paths: list[str] = []
    seen: set[str] = set()
    for i in range(corpus.n_pages):
        p = urlsplit(canonical_url("http://h" + quote(urlsplit(corpus.url(i)).path, safe="/"))).path
        if p in seen:
            p = f"{p}~{i}"
        seen.add(p)
        paths.append(p)
    return paths


def _page_text(corpus: Any, page: int) -> str:
    """The page's text: the kept plain text, else its bag of words (each word as often as it occurs)."""
    if corpus.texts is not None:
        return corpus.texts[page]
    a, b = int(corpus.text_ptr[page]), int(corpus.text_ptr[page + 1])
    terms, counts = corpus.text_terms[a:b].tolist(), corpus.text_counts[a:b].tolist()
    return " ".join(w for t, c in zip(terms, counts) for w in [corpus.vocab[t]] * c)


def corpus_page_html(corpus: Any, page: int, urls: Sequence[str]) -> bytes:
    """The HTML :func:`serve_corpus` serves for ``page``: :func:`gym_crawl.corpus.html_extract.render_page` of
    its title, text and out-links (``(urls[target], anchor text)``, in link order)."""
    from gym_crawl.corpus.html_extract import render_page

    a, b = corpus.outlinks(page)
    links = []
    for j in range(a, b):
        lo, hi = int(corpus.anchor_ptr[j]), int(corpus.anchor_ptr[j + 1])
        anchor = " ".join(corpus.vocab[int(t)] for t in corpus.anchor_terms[lo:hi].tolist())
        links.append((urls[int(corpus.link_dst[j])], anchor))
    return render_page(corpus.titles[page], _page_text(corpus, page), links)


def serve_corpus(corpus: Any, n_hosts: int | None = None, *, misbehave: Mapping[str, Iterable[str]] | None = None,
                 settings: MisbehaveSettings | None = None, bind: str = "auto", first_address: int = 2) -> Site:
    """Serve a :class:`~gym_crawl.corpus.core.Corpus` as a website of ``n_hosts`` hosts (default: one per
    domain, at most 8).

    Page ``p`` lives on host ``"h<domain id % n_hosts>"`` at ``corpus_paths(corpus)[p]``; its HTML is
    :func:`corpus_page_html` (rendered on its first request), with links to the absolute URLs of their
    targets on whatever host those live. ``site.page_urls[p]`` is page ``p``'s URL; each host's ``/`` lists
    its pages. ``misbehave`` keys are host labels (``"h0"``, ...). To serve a folder of HTML files byte for
    byte, use :func:`serve_folder`.
    """
    n = n_hosts if n_hosts is not None else min(max(1, len(corpus.domains)), 8)
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n_hosts must be a positive int, got {n_hosts!r}")
    labels = [f"h{i}" for i in range(n)]
    paths = corpus_paths(corpus)
    host_of = [labels[d % n] for d in corpus.page_domain.tolist()]
    # bind first, then route every page to its absolute URL (which needs the bound addresses)
    site = serve_site({lab: {"/": b""} for lab in labels}, misbehave=misbehave, settings=settings, bind=bind,
                      first_address=first_address)
    page_urls = [site.url(host_of[p], paths[p]) for p in range(corpus.n_pages)]
    for p in range(corpus.n_pages):
        site._routes[host_of[p]][paths[p]] = _LazyPage(corpus, p, page_urls)
    for lab in labels:
        mine = [(paths[p], corpus.titles[p]) for p in range(corpus.n_pages) if host_of[p] == lab]
        site._routes[lab]["/"] = html_page(f"{lab} index", "<p>Every page of this host.</p>", mine)
    site.page_urls = page_urls
    return site


class _LazyPage:
    """Renders one corpus page on its first request (a large corpus is not rendered up front)."""

    def __init__(self, corpus: Any, page: int, urls: list[str]):
        self.corpus, self.page, self.urls = corpus, page, urls
        self._body: bytes | None = None
        self._lock = threading.Lock()

    def __call__(self, path: str) -> Response:
        with self._lock:
            if self._body is None:
                self._body = corpus_page_html(self.corpus, self.page, self.urls)
        return Response(self._body)


# ---------------------------------------------------------------------- folders of static files
def _static_route(root: Path) -> Callable[[str], Response | None]:
    root = root.resolve()

    def route(path: str) -> Response | None:
        rel = posixpath.normpath(unquote(path)).lstrip("/")
        if rel.startswith("..") or "\x00" in rel:
            return None
        target = root / rel if rel not in ("", ".") else root
        if target.is_dir():
            if not path.endswith("/"):
                return _redirect(quote(path) + "/", 301)
            for index in ("index.html", "index.htm"):
                if (target / index).is_file():
                    target = target / index
                    break
            else:
                return None
        if not target.is_file():
            return None
        ctype, enc = mimetypes.guess_type(target.name)
        try:
            body = target.read_bytes()
        except OSError:
            return None
        headers = (("Content-Encoding", enc),) if enc == "gzip" else ()
        return Response(body, content_type=ctype or "application/octet-stream", headers=headers)

    return route


def serve_folder(path: str | os.PathLike, hosts: Iterable[str] | Mapping[str, str | os.PathLike] | None = None, *,
                 bind: str = "auto", first_address: int = 2) -> Site:
    """Serve folders of static files (saved or installed HTML documentation) as separate hosts.

    :param path: a folder.
    :param hosts: ``None`` — each subfolder of ``path`` is a host labelled by its name (``path`` itself when
        it has none); a list of subfolder names — those; a mapping ``{label: folder}`` — each folder
        (relative to ``path`` unless absolute).

    A URL path maps to the file under the host's folder (``..`` cannot leave it; symbolic links are
    followed, as a web server configured for installed documentation does); a folder serves its
    ``index.html``/``index.htm`` (a folder URL without the trailing ``/`` is redirected to it), a missing
    file is a 404. Content types come from the file names.
    """
    root = Path(path).expanduser()
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a folder")
    if hosts is None:
        subs = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
        folders = {s: root / s for s in subs} if subs else {root.name: root}
    elif isinstance(hosts, Mapping):
        folders = {str(k): (root / v if not Path(v).is_absolute() else Path(v)) for k, v in hosts.items()}
    elif isinstance(hosts, str):
        raise TypeError(f"hosts must be a list of subfolder names or a mapping, got the string {hosts!r}")
    else:
        folders = {str(h): root / h for h in hosts}
    for label, f in folders.items():
        if not f.is_dir():
            raise FileNotFoundError(f"host {label!r}: {f} is not a folder")
    routes = {label: {"*": _static_route(f)} for label, f in folders.items()}
    return Site(routes, bind=bind, first_address=first_address)


# ---------------------------------------------------------------------- the `gym-crawl serve` command
def add_serve_arguments(p: Any) -> None:
    """Arguments of ``gym-crawl serve`` (an ``argparse`` parser)."""
    p.add_argument("sources", nargs="*",
                   help="a corpus (synthetic, synthetic-<N>, a path ...) to serve as a website, or with --folder "
                        "folders of static files (one host per folder)")
    p.add_argument("--folder", action="store_true",
                   help="serve SOURCES as folders of static files; a single folder with subfolders serves each "
                        "subfolder as a host")
    p.add_argument("--demo", action="store_true",
                   help="serve the misbehaving demo site (every misbehaviour on host 'a', a clean host 'b')")
    p.add_argument("--hosts", type=int, default=None, help="hosts for a corpus (default: one per domain, max 8)")
    p.add_argument("--misbehave", default="",
                   help=f"comma-separated misbehaviours added to every host: {', '.join(MISBEHAVIOURS)}")
    p.add_argument("--first-address", type=int, default=2, help="first loopback address 127.0.0.N (default 2)")
    p.add_argument("--duration", type=float, default=None, help="stop after this many seconds (default: Ctrl-C)")


def serve_command(args: Any) -> int:
    """Run ``gym-crawl serve``: start the site, print its hosts' URLs, serve until Ctrl-C or ``--duration``."""
    names = [n for n in args.misbehave.split(",") if n]
    for n in names:
        if n not in MISBEHAVIOURS:
            raise ValueError(f"unknown misbehaviour {n!r}; known: {sorted(MISBEHAVIOURS)}")
    if args.demo:
        site = serve_site({"a": {}, "b": {"/": html_page("b", "<p>A well-behaved host.</p>")}},
                          misbehave={"a": list(MISBEHAVIOURS), "b": names}, first_address=args.first_address)
    elif args.folder:
        if names:
            raise ValueError("--misbehave applies to a corpus or --demo, not to --folder")
        if not args.sources:
            raise ValueError("serve --folder needs at least one folder")
        if len(args.sources) == 1:
            site = serve_folder(args.sources[0], first_address=args.first_address)
        else:
            folders = {Path(s).name or s: Path(s).expanduser().resolve() for s in args.sources}
            if len(folders) != len(args.sources):
                raise ValueError(f"serve --folder: folder names must differ (they label the hosts): {args.sources}")
            site = serve_folder(Path.cwd(), hosts=folders, first_address=args.first_address)
    else:
        if len(args.sources) != 1:
            raise ValueError("serve needs exactly one corpus (or --folder FOLDER ..., or --demo)")
        from gym_crawl.corpus.sources import load_corpus

        corpus = load_corpus(args.sources[0])
        n = args.hosts
        misbehave = {f"h{i}": names for i in range(n or min(max(1, len(corpus.domains)), 8))} if names else None
        site = serve_corpus(corpus, n, misbehave=misbehave)
    with site:
        for label, url in site.base_urls.items():
            print(f"{label}\t{url}/", flush=True)
        try:
            if args.duration is not None:
                time.sleep(args.duration)
            else:
                while True:
                    time.sleep(3600)
        except KeyboardInterrupt:
            pass
        print(f"served {len(site.log)} requests", flush=True)
    return 0
