"""The HTTP connections of one fetch: every wait bounded by the fetch's deadline and its cancel event.

:class:`~gym_crawl.web.fetcher.PoliteFetcher` builds its urllib3 pools with the connection classes of this
module. While a request runs (:func:`bounded` sets its :class:`Budget` for the thread), every place the
request can wait is bounded:

* **name resolution** runs in a worker thread (``getaddrinfo`` cannot be interrupted), waited for at most
  the connect timeout and the deadline; a resolution still running then is abandoned;
* **connecting** is a non-blocking ``connect`` polled in slices of :data:`SLICE` seconds, for at most the
  connect timeout and the deadline;
* **every read** — the status line, each header line, each piece of the body — waits at most
  ``read_timeout`` since the last bytes arrived and never past the deadline, polled in slices of
  :data:`SLICE` seconds; a server trickling bytes (the headers at 2 bytes/s) is cut off at the deadline,
  not only after each read timeout;
* the **cancel event** (``PoliteFetcher.cancel``, a Ctrl-C) is seen within one slice wherever the request
  waits.

A read past the deadline raises ``TimeoutError`` and a cancelled one :class:`Cancelled` (urllib3 turns
them into its ``ReadTimeoutError`` / ``ProtocolError``; the fetcher names the outcome). Informational
replies (``1xx`` other than ``101``, e.g. ``103 Early Hints``) before the final response are skipped, as
browsers do, instead of being taken for the response.
"""
from __future__ import annotations

import errno
import http.client
import io
import os
import selectors
import socket
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

__all__ = ["SLICE", "Budget", "CancelFlag", "Cancelled", "ContentDecoder", "DecodeError", "bounded",
           "connection_classes"]

SLICE = 0.2
"""Seconds a blocked connect or read waits before it looks at the cancel event and the deadline again."""
MAX_INFORMATIONAL = 16
"""Informational (1xx) replies skipped before a final response; more is a protocol error."""

_local = threading.local()
_resolver: ThreadPoolExecutor | None = None
_resolver_lock = threading.Lock()


class Cancelled(ConnectionAbortedError):
    """The fetch was cancelled while it waited on the network."""


class DecodeError(ValueError):
    """A ``Content-Encoding`` stream that does not decode or ends before its end (a broken gzip body): the
    server's bytes are wrong, the network is not at fault, so the fetch is not retried."""


class CancelFlag:
    """A flag set once to cancel (:meth:`set`), safe to set from a signal handler (no lock is taken, unlike
    ``threading.Event``, whose ``set`` would deadlock a handler that interrupted its owner's ``wait``)."""

    __slots__ = ("_set",)

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set

    def wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` in slices of :data:`SLICE`, ending early once set; returns :meth:`is_set`."""
        end = time.monotonic() + max(0.0, seconds)
        while not self._set:
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(SLICE, left))
        return self._set


@dataclass
class Budget:
    """The bounds of the request running in this thread.

    :param deadline: ``time.monotonic()`` value no wait may pass.
    :param connect_timeout: seconds to resolve the host name and to connect.
    :param read_timeout: seconds a read may wait for its next bytes.
    :param cancel: set when the fetch is cancelled.
    """

    deadline: float
    connect_timeout: float
    read_timeout: float
    cancel: CancelFlag

    def remaining(self) -> float:
        """Seconds left before the deadline (never negative)."""
        return max(0.0, self.deadline - time.monotonic())

    def check(self) -> None:
        """Raise :class:`Cancelled` or ``TimeoutError`` when the request must stop now."""
        if self.cancel.is_set():
            raise Cancelled("the fetch was cancelled")
        if time.monotonic() >= self.deadline:
            raise TimeoutError("the fetch's time limit (max_time) was reached")


class bounded:  # noqa: N801 - used as a context manager, like contextlib's lower-case ones
    """``with bounded(budget): ...`` — the connections of this module obey ``budget`` in this thread."""

    def __init__(self, budget: Budget):
        self.budget = budget

    def __enter__(self) -> Budget:
        self._old = getattr(_local, "budget", None)
        _local.budget = self.budget
        return self.budget

    def __exit__(self, *exc: object) -> None:
        _local.budget = self._old


def _budget() -> Budget | None:
    return getattr(_local, "budget", None)


def _pool() -> ThreadPoolExecutor:
    global _resolver
    with _resolver_lock:
        if _resolver is None:
            _resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="gym_crawl-resolve")
        return _resolver


def _resolve(host: str, port: int, budget: Budget | None, timeout: float | None) -> list[Any]:
    """``getaddrinfo`` of ``host`` (an IP literal is answered at once), bounded by ``budget``."""
    family = socket.AF_UNSPEC
    try:  # a literal address needs no resolver (and no thread)
        return socket.getaddrinfo(host, port, family, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
    except socket.gaierror:
        pass
    if budget is None:
        return socket.getaddrinfo(host, port, family, socket.SOCK_STREAM)
    fut = _pool().submit(socket.getaddrinfo, host, port, family, socket.SOCK_STREAM)
    limit = time.monotonic() + min(budget.connect_timeout if timeout is None else timeout, budget.remaining())
    while True:
        budget.check()
        left = limit - time.monotonic()
        if left <= 0:
            fut.cancel()
            raise TimeoutError(f"resolving {host!r} took longer than the connect timeout")
        try:
            return list(fut.result(timeout=min(SLICE, left)))
        except FutureTimeout:
            continue


def _connect(address: tuple[str, int], timeout: float | None, options: Any) -> socket.socket:
    """A connected socket to ``address``: each address of the host tried in turn, each connect polled so the
    budget's cancel event and deadline are seen."""
    budget = _budget()
    host, port = address
    host = host.strip("[]")
    err: BaseException | None = None
    for af, socktype, proto, _, sa in _resolve(host, port, budget, timeout):
        sock = socket.socket(af, socktype, proto)
        try:
            for opt in options or ():
                sock.setsockopt(*opt)
            if budget is None:
                sock.settimeout(timeout)
                sock.connect(sa)
                return sock
            limit = time.monotonic() + min(budget.connect_timeout if timeout is None else timeout,
                                           budget.remaining())
            sock.setblocking(False)
            code = sock.connect_ex(sa)
            if code not in (0, errno.EINPROGRESS, errno.EWOULDBLOCK, errno.EALREADY, errno.EINTR):
                raise OSError(code, f"{os.strerror(code)} ({sa[0]}:{sa[1]})")
            with selectors.DefaultSelector() as sel:
                sel.register(sock, selectors.EVENT_WRITE)
                while code != 0:
                    budget.check()
                    left = limit - time.monotonic()
                    if left <= 0:
                        raise TimeoutError(f"connecting to {sa[0]}:{sa[1]} timed out")
                    if sel.select(min(SLICE, left)):
                        code = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                        if code != 0:
                            raise OSError(code, f"{os.strerror(code)} ({sa[0]}:{sa[1]})")
                        break
            sock.settimeout(max(0.001, min(budget.read_timeout, budget.remaining())))  # the TLS handshake's bound
            return sock
        except BaseException as e:
            sock.close()
            if isinstance(e, (Cancelled, TimeoutError)) or not isinstance(e, OSError):
                raise
            err = e
    raise err if err is not None else OSError(f"no address found for {host!r}")


class _Reader(io.RawIOBase):
    """The byte stream of a socket whose every read obeys the thread's :class:`Budget`. It holds the socket's
    own ``makefile`` stream too, so the socket stays open until this reader is closed (as ``http.client``
    expects when it hands a ``Connection: close`` response its socket)."""

    def __init__(self, sock: Any):
        super().__init__()
        self._sock = sock
        self._ref = sock.makefile("rb", buffering=0)  # counts as an open file of the socket

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        if not self.closed:
            self._ref.close()
        super().close()

    def readinto(self, b: Any) -> int:
        budget = _budget()
        if budget is None:
            return int(self._sock.recv_into(b))
        limit = time.monotonic() + budget.read_timeout
        while True:
            budget.check()
            now = time.monotonic()
            left = min(limit, budget.deadline) - now
            if left <= 0:
                raise TimeoutError("the read timed out" if limit <= budget.deadline else
                                   "the fetch's time limit (max_time) was reached")
            self._sock.settimeout(min(SLICE, left))
            try:
                return int(self._sock.recv_into(b))
            except (TimeoutError, InterruptedError):
                continue


class _Socket:
    """A socket whose ``makefile`` reads through :class:`_Reader` (every other call goes to the socket)."""

    def __init__(self, sock: Any):
        self._sock = sock

    def makefile(self, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if "r" in mode and "b" in mode:
            return io.BufferedReader(_Reader(self._sock))
        return self._sock.makefile(mode, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _Response(http.client.HTTPResponse):
    """``http.client``'s response, skipping informational replies (``1xx`` but ``101``) before the final one."""

    def _read_status(self) -> tuple[str, int, str]:
        for _ in range(MAX_INFORMATIONAL):
            version, status, reason = super()._read_status()  # type: ignore[misc]
            if not (100 < status < 200) or status == 101:
                return version, status, reason
            http.client.parse_headers(self.fp)  # the informational reply's headers (e.g. Link hints)
        raise http.client.HTTPException(f"more than {MAX_INFORMATIONAL} informational replies")


class ContentDecoder:
    """Undoes ``Content-Encoding`` gzip / deflate (in the order the codings were applied; ``identity`` is none)
    and tells whether each compressed stream was *complete* — urllib3's decoders return what they have, so a
    stream cut short or garbage after a gzip header would pass for a (truncated or empty) page.

    ``feed(data, limit)`` returns at most ``limit`` decoded bytes (the caller's cap: a decompression bomb is cut
    there, with :attr:`over` set); ``feed`` and :meth:`finish` raise :class:`DecodeError` naming the coding whose
    stream did not end. A gzip body of several members is read member by member; bytes after the last member are
    ignored, as browsers do. ``deflate`` is the zlib format, or raw deflate when the body does not start with a zlib
    header.
    """

    def __init__(self, codings: list[str]):
        self.stages = [c for c in reversed(codings) if c != "identity"]
        self._objs: list[Any] = [None] * len(self.stages)
        self._done = [False] * len(self.stages)
        self._ended = [False] * len(self.stages)  # a member (or the stream) ended
        self._fed = False
        self.over = False

    def _obj(self, i: int, data: bytes) -> Any:
        if self.stages[i] in ("gzip", "x-gzip"):
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
        zlib_header = len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] * 256 + data[1]) % 31 == 0
        return zlib.decompressobj(zlib.MAX_WBITS if zlib_header else -zlib.MAX_WBITS)

    def _stage(self, i: int, data: bytes) -> bytes:
        out = bytearray()
        gz = self.stages[i] in ("gzip", "x-gzip")
        while data and not self._done[i]:
            if self._objs[i] is None:
                if self._ended[i] and not (gz and data[:1] == b"\x1f"):
                    self._done[i] = True  # bytes after the last member or stream: ignored, as browsers do
                    break
                self._objs[i] = self._obj(i, data)
            d = self._objs[i]
            try:
                out += d.decompress(data)
            except zlib.error as e:
                raise DecodeError(f"the {self.stages[i]} body does not decode ({e})") from None
            if not d.eof:
                break
            self._ended[i] = True
            self._objs[i], data = None, d.unused_data  # another gzip member may follow
        return bytes(out)

    def feed(self, data: bytes, limit: int) -> bytes:
        self._fed = self._fed or bool(data)
        if not self.stages:
            out = data
        else:  # 1 KiB of input at a time: a bomb (deflate expands ~1000:1) never holds more than ~1 MB past limit
            pieces = bytearray()
            for k in range(0, len(data), 1024):
                piece = data[k:k + 1024]
                for i in range(len(self.stages)):
                    piece = self._stage(i, piece)
                pieces += piece
                if len(pieces) > limit:
                    break
            out = bytes(pieces)
        if len(out) > limit:
            self.over = True
            return out[:limit]
        return out

    def finish(self) -> None:
        """Raise :class:`DecodeError` when a compressed stream did not end (the body was cut short or is garbage); an
        empty body (a redirect, a HEAD reply) is no stream at all."""
        if not self._fed:
            return
        for i, c in enumerate(self.stages):
            if not (self._done[i] or (self._ended[i] and self._objs[i] is None)):
                raise DecodeError(f"the {c} body ends before its compressed stream does")


def connection_classes() -> tuple[type, type]:
    """``(HTTPConnection, HTTPSConnection)``: urllib3's, with every wait bounded (see the module docstring)."""
    global _CLASSES
    if _CLASSES is None:
        import urllib3.connection as uc
        from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

        def new_conn(self: Any) -> socket.socket:
            try:
                return _connect((self._dns_host, self.port), self.timeout, self.socket_options)
            except Cancelled:
                raise
            except TimeoutError as e:
                raise ConnectTimeoutError(self, f"connection to {self.host} timed out: {e}") from e
            except OSError as e:
                raise NewConnectionError(self, f"failed to establish a new connection: {e}") from e

        def connect(self: Any, base: Any) -> None:
            base.connect(self)
            if self.sock is not None and not isinstance(self.sock, _Socket):
                self.sock = _Socket(self.sock)

        plain = type("BoundedHTTPConnection", (uc.HTTPConnection,), {
            "response_class": _Response, "_new_conn": new_conn,
            "connect": lambda self: connect(self, uc.HTTPConnection)})
        tls = type("BoundedHTTPSConnection", (uc.HTTPSConnection,), {
            "response_class": _Response, "_new_conn": new_conn,
            "connect": lambda self: connect(self, uc.HTTPSConnection)})
        _CLASSES = (plain, tls)
    return _CLASSES


_CLASSES: tuple[type, type] | None = None
