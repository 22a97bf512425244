"""The HTTP site itself: :class:`Site` runs one threaded server per host on loopback, answers each request
from its routes (:class:`Response`, :class:`Series`, bytes, or a function of the request target) and logs
every request (:class:`LoggedRequest`). :func:`~gym_crawl.web.serve.server.serve_site` builds one.
"""
from __future__ import annotations

import html
import itertools
import selectors
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Union
from urllib.parse import urlsplit

__all__ = ["LoggedRequest", "Raw", "Response", "Route", "Series", "Site", "html_page", "redirect"]

Route = Union[bytes, str, "Response", "Raw", "Series", Callable[[str], Union["Response", "Raw", None]]]
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


@dataclass(frozen=True)
class Raw:
    """Bytes written to the connection exactly as given — status line, headers and body, malformed on purpose
    if need be — ``piece`` bytes every ``pace`` seconds (a server trickling its headers or body); the
    connection is closed afterwards. The hostile responses of the tests are built from it.

    :param data: the whole response as it goes on the wire.
    :param pace: seconds between pieces (0: all at once).
    :param piece: bytes per write.
    :param delay: seconds before the first byte.
    :param status: the status recorded in the site's log (the data itself is not parsed).
    :param hold: seconds the connection stays open, silent, after the last byte (a server that stalls; the hold
        ends early when the client hangs up).
    :param reset: end with a TCP reset (``SO_LINGER`` 0) instead of an orderly close.
    """

    data: bytes
    pace: float = 0.0
    piece: int = 65536
    delay: float = 0.0
    status: int = 0
    hold: float = 0.0
    reset: bool = False


class Series:
    """Responses served in turn, one per request to the route; the last one repeats."""

    def __init__(self, *responses: Response | Raw):
        if not responses:
            raise ValueError("Series needs at least one Response")
        self.responses = responses
        self._n = 0
        self._lock = threading.Lock()

    def next(self) -> Response | Raw:
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


def redirect(location: str, status: int = 302) -> Response:
    """A redirect to ``location`` (absolute, or relative to the request) with ``status``."""
    return Response(b"", status=status, content_type=None, headers=(("Location", location),))


# ---------------------------------------------------------------------- server
class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    block_on_close = False

    def __init__(self, addr: tuple[str, int], site: Site, label: str):
        self.site = site
        self.label = label
        super().__init__(addr, _Handler)

    def server_bind(self) -> None:
        """Bind without ``HTTPServer.server_bind``'s reverse lookup of the address (``socket.getfqdn``): the
        site resolves no name."""
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = host.decode() if isinstance(host, bytes) else str(host)
        self.server_port = port

    @property
    def base_url(self) -> str:
        """``http://<bound address>:<port>`` of this server."""
        host, port = self.server_address[:2]
        return f"http://{host.decode() if isinstance(host, bytes) else host}:{port}"

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
        """Whether the client hung up (readable with nothing to read). A selector, not ``select.select``,
        which fails on descriptors past 1024 (a process with many open files)."""
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(self.connection, selectors.EVENT_READ)
                readable = bool(sel.select(0))
            return readable and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
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
        if site.latency:
            time.sleep(site.latency)
        if isinstance(resp, Raw):
            self._serve_raw(resp, entry)
            return
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

    def _serve_raw(self, resp: Raw, entry: LoggedRequest) -> None:
        """Write ``resp.data`` as it is, paced; stop when the client hangs up; close the connection."""
        self.close_connection = True
        try:
            if resp.delay:
                time.sleep(resp.delay)
            step = max(1, resp.piece)
            for i in range(0, len(resp.data), step):
                if i and resp.pace:
                    if self._client_gone():
                        entry.client_closed = True
                        return
                    time.sleep(resp.pace)
                self.wfile.write(resp.data[i:i + step])
                self.wfile.flush()
                entry.bytes_sent += len(resp.data[i:i + step])
            hold_until = time.monotonic() + resp.hold
            while time.monotonic() < hold_until:
                if self._client_gone():
                    entry.client_closed = True
                    return
                time.sleep(min(_POLL, max(0.0, hold_until - time.monotonic())))
            if resp.reset:
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            entry.client_closed = True
        finally:
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
    :param latency: seconds every response waits before its status line (a far server: every request costs
        this round trip), on top of a route's own ``delay``.

    ``base_urls[label]`` is ``http://<address>:<port>`` (no trailing slash); ``url(label, path)`` builds a
    URL; ``log`` lists every :class:`LoggedRequest` in arrival order (a request is logged when it arrives,
    its ``end`` is set just before its last byte is written).
    """

    def __init__(self, routes: Mapping[str, Mapping[str, Route]], *, bind: str = "auto", first_address: int = 2,
                 latency: float = 0.0):
        if not routes:
            raise ValueError("serve_site needs at least one host")
        if bind not in ("auto", "addresses", "ports"):
            raise ValueError(f"bind must be 'auto', 'addresses' or 'ports', got {bind!r}")
        labels = list(routes)
        if not (isinstance(latency, (int, float)) and 0 <= latency < 60):
            raise ValueError(f"latency must be a number of seconds in [0, 60), got {latency!r}")
        self.latency = float(latency)
        if not 1 <= first_address <= 254 - len(labels):
            raise ValueError(f"first_address must be in [1, {254 - len(labels)}] for {len(labels)} hosts, "
                             f"got {first_address}")
        for label, rs in routes.items():
            for path, r in rs.items():
                if not (isinstance(r, (bytes, bytearray, str, Response, Raw, Series)) or callable(r)):
                    raise TypeError(f"route {path!r} of host {label!r} must be bytes, str, Response, Raw, Series or "
                                    f"a function of the path, got {type(r).__name__}")
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
            s.label: s.base_url for s in servers}
        self._threads = [threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05},
                                          name=f"site-{s.label}", daemon=True) for s in servers]
        for t in self._threads:
            t.start()
        self._closed = False
        self.page_urls: list[str] = []
        """Set by :func:`serve_corpus`: the URL of each corpus page (index = page id)."""

    # -------------------------------------------------------------- routing
    def set_route(self, label: str, path: str, route: Route) -> None:
        """Serve ``route`` at the exact ``path`` of host ``label`` from now on (a new route, or one replaced),
        e.g. pages whose links need the bound addresses (:func:`~gym_crawl.web.serve.server.serve_corpus`).

        :param label: a host label of :attr:`hosts` (``KeyError`` otherwise).
        :param path: an exact path (a ``*`` prefix route can only be given to the constructor).
        :param route: bytes, str, :class:`Response`, :class:`Raw`, :class:`Series` or a function of the path.
        """
        if not (isinstance(route, (bytes, bytearray, str, Response, Raw, Series)) or callable(route)):
            raise TypeError(f"route {path!r} of host {label!r} must be bytes, str, Response, Raw, Series or "
                            f"a function of the path, got {type(route).__name__}")
        self._routes[label][path] = route

    def _resolve(self, label: str, raw_path: str) -> Response | Raw:
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


def _as_response(route: Any, raw_path: str) -> Response | Raw | None:
    if route is None:
        return None
    if isinstance(route, (Response, Raw)):
        return route
    if isinstance(route, Series):
        return route.next()
    if isinstance(route, (bytes, bytearray)):
        return Response(bytes(route))
    if isinstance(route, str):
        return Response(route.encode("utf-8"))
    if callable(route):
        return _as_response(route(raw_path), raw_path)
    raise TypeError(f"route for {raw_path!r} must be bytes, str, Response, Raw, Series or a function, "
                    f"got {type(route).__name__}")


