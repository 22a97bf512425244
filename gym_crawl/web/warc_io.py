"""Record a live crawl as a WARC file, and read the fetches and decisions back.

:class:`WarcRecorder` writes with ``warcio``'s ``WARCWriter`` (WARC/1.1, one gzip member per record when the
file name ends in ``.gz``):

* a ``warcinfo`` record first (software, the :class:`~gym_crawl.web.policy.FetchPolicy` as JSON, the
  crawl's seeds; a resumed file gets one more, with ``resumed: true``);
* per HTTP exchange (every redirect hop, retry and robots.txt fetch) a ``request`` record (unless no
  connection could be made) and, when a status line arrived, a ``response`` record (``WARC-Concurrent-To`` the request;
  ``WARC-Truncated`` when the body
  was cut at the byte cap, a timeout or a disconnect). Bodies are stored content-decoded, so — as Common
  Crawl does — the response headers that described the encoded transfer are renamed
  (``Transfer-Encoding`` and ``Content-Encoding`` become ``X-Crawler-Transfer-Encoding`` /
  ``X-Crawler-Content-Encoding``, a changed ``Content-Length`` is kept as ``X-Crawler-Content-Length``);
* after each fetch a ``metadata`` record (``Content-Type: application/json``) holding
  ``{"kind": "fetch", "result": FetchResult.to_metadata()}`` — the result minus its body — with
  ``WARC-Refers-To`` naming the response record that holds the body;
* :meth:`WarcRecorder.write_decision` adds ``{"kind": "decision", "decision": {...}}`` metadata records for
  the crawl's decisions (step, page, chosen URL, score, ... — whatever the caller logs), and
  :meth:`WarcRecorder.write_metadata` ``{"kind": <kind>, <kind>: {...}}`` records of any other kind (a live
  web's arrivals and robots.txt rules, :mod:`gym_crawl.web.feed`).

The records of one fetch are buffered and written to the file together, then flushed, so Ctrl-C or a crash
loses at most the fetch in progress. ``WarcRecorder(path, append=True)`` resumes a file: a record cut by a
kill is detected (an unfinished gzip member, or a record shorter than its ``Content-Length``) and the file is
truncated back to the end of its last complete record before writing continues.

:func:`read_fetches` rebuilds every :class:`~gym_crawl.web.result.FetchResult` in crawl order (the
body from the response record the metadata refers to), :func:`read_decisions` the decisions,
:func:`read_metadata` the records of one kind and :func:`read_warcinfo` the warcinfo fields.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gym_crawl.registry import install_command
from gym_crawl.web.policy import FetchPolicy, default_user_agent
from gym_crawl.web.result import Exchange, FetchResult

__all__ = ["MAX_TARGET_URI", "WarcInUseError", "WarcRecorder", "complete_prefix", "read_decisions", "read_fetches",
           "read_first_warcinfo", "read_metadata", "read_warcinfo", "readers_disagree", "records_fastwarc",
           "records_warcio"]

WARC_VERSION = "WARC/1.1"
_JSON = "application/json"
_ENCODING_HEADERS = ("transfer-encoding", "content-encoding")


def _warcio() -> Any:
    try:
        import warcio  # noqa: F401
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter
    except ImportError:  # pragma: no cover - warcio comes with the web extra
        raise ImportError(f"WARC recording needs warcio: {install_command('web')}") from None
    return WARCWriter, StatusAndHeaders


def recorded_headers(headers: Sequence[tuple[str, str]], body_length: int,
                     decoded: bool = True) -> list[tuple[str, str]]:
    """Response headers as stored beside a content-decoded body (see the module docstring). ``decoded``:
    false when the body was not read because its content coding is not one the fetcher undoes — then
    ``Content-Encoding`` stays as it was sent (nothing was decoded)."""
    out: list[tuple[str, str]] = []
    renamed = _ENCODING_HEADERS if decoded else ("transfer-encoding",)
    lengths = [v for k, v in headers if k.lower() == "content-length"]
    changed = any(k.lower() in renamed for k, _ in headers) or \
        (bool(lengths) and lengths[0].strip() != str(body_length))
    for k, v in headers:
        lk = k.lower()
        if lk in renamed:
            out.append(("X-Crawler-" + k, v))
        elif lk == "content-length" and changed:
            out.append(("X-Crawler-Content-Length", v))
        else:
            out.append((k, v))
    if changed or not lengths:
        out.append(("Content-Length", str(body_length)))
    return out


class WarcRecorder:
    """Writes a crawl's exchanges, fetch results and decisions to one WARC file (see the module docstring).

    :param path: the WARC file; gzip-compressed per record when its name ends in ``.gz``.
    :param append: continue an existing file (after cutting an incomplete last record) instead of starting a
        new one; a missing file is created. The resumed run's warcinfo record is written with its first other
        record, so a run that records nothing (resuming a finished crawl) leaves the file unchanged.
    :param overwrite: replace an existing file when ``append`` is false (otherwise that is a
        ``FileExistsError``, so a finished crawl is never lost to a rerun).
    :param policy: the crawl's :class:`FetchPolicy`, recorded in the warcinfo record.
    :param seeds: the crawl's seed URLs, recorded in the warcinfo record.
    :param info: further warcinfo fields (``name: value``).
    :param fsync: also ``os.fsync`` after each fetch (durable against power loss, slower).

    The file is locked for writing (``flock``) while the recorder is open: a second recorder of the same file,
    in this process or another, is refused with :class:`WarcInUseError` naming the process that holds it.
    Resuming cuts only an incomplete *last* record: a file damaged before its end (complete records after the
    damage) or one that does not start with a WARC record is refused with a ``ValueError``, never cut.

    Usable as a context manager; :meth:`close` is idempotent.
    """

    def __init__(self, path: str | os.PathLike, *, append: bool = False, overwrite: bool = False,
                 policy: FetchPolicy | None = None, seeds: Sequence[str] = (), info: Mapping[str, Any] | None = None,
                 fsync: bool = False):
        WARCWriter, self._SAH = _warcio()
        self.path = Path(path)
        self.gzip = self.path.name.endswith(".gz")
        self._fsync = fsync
        self._lock = threading.Lock()
        self.truncated_bytes = 0
        """Bytes of an incomplete last record cut off when the file was resumed."""
        if self.path.exists() and not self.path.is_file():  # opening a FIFO for writing blocks until a reader comes
            raise ValueError(f"{self.path}: not a regular file (a FIFO, device or socket); a WARC must be a file")
        resumed = append and self.path.exists()
        if not resumed and self.path.exists() and not overwrite:
            raise FileExistsError(f"{self.path}: WARC file exists; pass append=True to resume it or "
                                  "overwrite=True to replace it")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if resumed else 0), 0o666)
        try:
            _lock(fd, self.path)
            if resumed:
                size = os.fstat(fd).st_size
                good = complete_prefix(self.path)
                if good < size:
                    _check_cut(self.path, good, size)
                    os.ftruncate(fd, good)
                    self.truncated_bytes = size - good
            else:
                os.ftruncate(fd, 0)  # only now that the lock is ours
        except BaseException:
            os.close(fd)
            raise
        self._file = os.fdopen(fd, "ab" if resumed else "wb")  # closing it releases the lock
        self._buf = io.BytesIO()
        self._writer = WARCWriter(self._buf, gzip=self.gzip, warc_version=WARC_VERSION)
        self._request_ids: dict[int, str] = {}
        self._response_ids: dict[int, str] = {}
        self._closed = False
        fields: dict[str, Any] = {
            "software": default_user_agent(),
            "format": "WARC File Format 1.1",
            "conformsTo": "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/",
            "robots": ("obey" if policy.obey_robots else "ignore") if policy is not None else "",
            "http-header-user-agent": policy.agent if policy is not None else "",
            "gym-crawl-policy": json.dumps(policy.to_dict(), sort_keys=True) if policy is not None else "",
            "gym-crawl-seeds": json.dumps(list(seeds)) if seeds else "",
            "gym-crawl-resumed": "true" if resumed else "",
        }
        for k, v in (info or {}).items():
            fields[str(k)] = v if isinstance(v, str) else json.dumps(v)
        with self._lock:
            self._writer.write_record(self._writer.create_warcinfo_record(self.path.name, fields))
            if resumed:  # written with the first record of this run: a run that adds nothing leaves the file as is
                self._pending_info: bytes = self._buf.getvalue()
                self._buf.seek(0)
                self._buf.truncate()
            else:
                self._pending_info = b""
                self._flush_locked()

    # ------------------------------------------------------------------ records
    def write_exchange(self, ex: Exchange) -> None:
        """Buffer the request record (when the request was sent) and the response record (when a status
        line arrived) of ``ex``."""
        if not ex.sent:
            return
        parts = urlsplit(ex.url)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        with self._lock:
            self._check_open()
            w = self._writer
            req_http = self._SAH(f"{ex.method} {target} {ex.http_version}", _clean(ex.request_headers),
                                 is_http_request=True)
            _raw_headers(req_http)
            req = w.create_warc_record(ex.url, "request", payload=io.BytesIO(b""), length=0, http_headers=req_http,
                                       warc_headers_dict={"WARC-Date": ex.started_at})
            req_id = req.rec_headers.get_header("WARC-Record-ID")
            w.write_record(req)
            self._request_ids[id(ex)] = req_id
            if ex.status is None:
                return
            http = self._SAH(_clean_text(f"{ex.status} {ex.reason}".rstrip()),
                             _clean(recorded_headers(ex.headers, len(ex.body), decoded=ex.decoded)),
                             protocol=ex.http_version)
            _raw_headers(http)
            wh = {"WARC-Date": ex.started_at, "WARC-Concurrent-To": req_id}
            if ex.peer_ip:
                wh["WARC-IP-Address"] = ex.peer_ip
            if ex.truncated:
                wh["WARC-Truncated"] = ex.truncated
            resp = w.create_warc_record(ex.url, "response", payload=io.BytesIO(ex.body), length=len(ex.body),
                                        http_headers=http, warc_headers_dict=wh)
            w.write_record(resp)
            self._response_ids[id(ex)] = resp.rec_headers.get_header("WARC-Record-ID")

    def write_result(self, result: FetchResult) -> None:
        """Write the fetch's metadata record, then the whole fetch to the file, and flush."""
        final = next((e for e in reversed(result.exchanges) if e.purpose == "page" and e.status is not None), None)
        refers = self._response_ids.get(id(final)) if final is not None else None
        uri = _uri_or_urn(result.final_url or result.url, "fetch")
        self._metadata(uri, {"kind": "fetch", "result": result.to_metadata()}, result.fetched_at, refers)
        with self._lock:
            self._request_ids.clear()
            self._response_ids.clear()
            self._flush_locked()

    def write_decision(self, decision: Mapping[str, Any]) -> None:
        """Write one decision of the crawl (a JSON-serialisable mapping) as a metadata record, and flush.
        Its ``url`` (when present) is the record's target URI."""
        d = dict(decision)
        try:
            json.dumps(d)
        except (TypeError, ValueError) as e:
            raise TypeError(f"write_decision: decision must be JSON-serialisable ({e})") from None
        url = d.get("url")
        uri = _uri_or_urn(url, "decision")
        self._metadata(uri, {"kind": "decision", "decision": d}, None, None)
        with self._lock:
            self._flush_locked()

    def write_metadata(self, kind: str, payload: Mapping[str, Any], uri: str | None = None) -> None:
        """Write ``{"kind": kind, kind: payload}`` (JSON-serialisable) as a metadata record, and flush;
        :func:`read_metadata` reads them back. ``kind`` must not be ``"fetch"`` (the fetcher's records)."""
        if kind == "fetch" or not isinstance(kind, str) or not kind:
            raise ValueError(f"write_metadata: kind must be a non-empty string other than 'fetch', got {kind!r}")
        d = dict(payload)
        try:
            json.dumps(d)
        except (TypeError, ValueError) as e:
            raise TypeError(f"write_metadata: payload must be JSON-serialisable ({e})") from None
        self._metadata(uri or f"urn:gym-crawl:{kind}", {"kind": kind, kind: d}, None, None)
        with self._lock:
            self._flush_locked()

    def _metadata(self, uri: str, payload: dict[str, Any], date: str | None, refers_to: str | None) -> None:
        uri = _uri_or_urn(uri, str(payload.get("kind") or "metadata"))
        data = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")
        wh = {"Content-Type": _JSON}
        if date:
            wh["WARC-Date"] = date
        if refers_to:
            wh["WARC-Refers-To"] = refers_to
        with self._lock:
            self._check_open()
            rec = self._writer.create_warc_record(uri, "metadata", payload=io.BytesIO(data), length=len(data),
                                                  warc_content_type=_JSON, warc_headers_dict=wh)
            self._writer.write_record(rec)

    # ------------------------------------------------------------------ file
    def flush(self) -> None:
        """Write the buffered records to the file and flush it."""
        with self._lock:
            if not self._closed:
                self._flush_locked()

    def _flush_locked(self) -> None:
        data = self._buf.getvalue()
        if data:
            if self._pending_info:
                self._file.write(self._pending_info)
                self._pending_info = b""
            self._file.write(data)
            self._buf.seek(0)
            self._buf.truncate()
        self._file.flush()
        if self._fsync:
            os.fsync(self._file.fileno())

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError(f"{self.path}: WarcRecorder is closed")

    def close(self) -> None:
        """Flush and close the file (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._flush_locked()
            self._file.close()
            self._closed = True

    def __enter__(self) -> WarcRecorder:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MAX_TARGET_URI = 8192
"""Longest ``WARC-Target-URI`` written: a longer URL (recorded in full in the JSON payload) is named by a
``urn:gym-crawl:<kind>`` instead, since a WARC header block past 32 KiB stops readers such as FastWARC."""


def _uri_or_urn(url: Any, kind: str) -> str:
    """``url`` when it can be a record's ``WARC-Target-URI`` (a printable ASCII URL without spaces, at most
    :data:`MAX_TARGET_URI` characters), else ``urn:gym-crawl:<kind>``."""
    ok = (isinstance(url, str) and 0 < len(url) <= MAX_TARGET_URI and ("://" in url or url.startswith("urn:"))
          and url.isascii() and url.isprintable() and not any(c.isspace() for c in url))
    return url if ok else f"urn:gym-crawl:{re.sub(r'[^a-z0-9-]', '-', kind.lower())[:40] or 'metadata'}"


def _clean_text(value: str) -> str:
    """A header line's text without CR/LF (a folded or hostile header must not end the header block early)."""
    return value.replace("\r", " ").replace("\n", " ")


def _clean(headers: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(_clean_text(k), _clean_text(v)) for k, v in headers]


def _raw_headers(http: Any) -> None:
    """Store the HTTP header block as the bytes that were on the wire: ``http.client`` decodes header bytes as
    ISO-8859-1, so encoding back gives them (warcio itself would percent-encode any non-ASCII value, turning a
    raw UTF-8 ``Location`` into another URL)."""
    try:
        http.headers_buff = http.to_str().encode("latin-1") + b"\r\n"
    except UnicodeEncodeError:  # text we wrote ourselves beyond Latin-1 (a contact URL): warcio's escaping
        http.compute_headers_buffer()


class WarcInUseError(OSError):
    """The WARC file is being written by another recorder (this process or another one)."""


def _lock(fd: int, path: Path) -> None:
    """Take the exclusive write lock of the WARC ``path`` (open as ``fd``) or raise :class:`WarcInUseError`."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - no flock (Windows): no lock
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise WarcInUseError(f"{path}: another crawl is writing this WARC ({_holder(fd)}); wait for it to end, "
                             "or record to another file") from None


def _holder(fd: int) -> str:
    """Who holds the ``flock`` of the file open as ``fd``, from ``/proc/locks`` (Linux), as words."""
    ino = os.fstat(fd).st_ino
    try:
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5].rsplit(":", 1)[-1] == str(ino):
                    pid = int(parts[4])
                    try:
                        with open(f"/proc/{pid}/cmdline", "rb") as c:
                            cmd = c.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
                    except OSError:
                        cmd = ""
                    me = " (this process)" if pid == os.getpid() else ""
                    return f"held by process {pid}{me}" + (f": {cmd[:120]}" if cmd else "")
    except (OSError, ValueError):
        pass
    return "its lock is held"


def _check_cut(path: Path, good: int, size: int) -> None:
    """Refuse to cut ``path`` at ``good`` when that is not an incomplete last record: nothing readable at its
    start, or complete records after the damage."""
    if good == 0:
        with open(path, "rb") as f:
            head = f.read(4)
        if not (head.startswith(b"WARC") or head.startswith(b"\x1f\x8b")):
            raise ValueError(f"{path}: not a WARC file (it starts with {head!r}); refusing to append to it")
    with open(path, "rb") as f:
        f.seek(good + 1)
        rest = f.read(min(size - good - 1, 64 << 20))
    gz = path.name.endswith(".gz")
    marker = b"\x1f\x8b\x08" if gz else b"\r\n\r\nWARC/1."
    at = rest.find(marker)
    while at >= 0:
        if not gz:
            raise ValueError(f"{path}: damaged at byte {good} with complete records after it; refusing to cut "
                             f"{size - good} bytes off (copy out what you need, or start a new WARC)")
        try:
            head = zlib.decompressobj(31).decompress(rest[at:at + 65536], 16)
        except zlib.error:
            head = b""
        if head.startswith(b"WARC/"):
            raise ValueError(f"{path}: damaged at byte {good} with complete records after it; refusing to cut "
                             f"{size - good} bytes off (copy out what you need, or start a new WARC)")
        at = rest.find(marker, at + 1)


# ---------------------------------------------------------------------- repair
def _content_length(head: bytes, head_end: int) -> int | None:
    """The ``Content-Length`` of a WARC record whose header block ends at ``head_end`` (the last such line's),
    ``None`` when it has none or one is not an integer."""
    length = None
    for line in head[:head_end].split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            try:
                length = int(v.strip())
            except ValueError:
                return None
    return length


def _record_complete(data: bytes) -> bool:
    """Whether ``data`` (one uncompressed record) is a whole WARC record."""
    head_end = data.find(b"\r\n\r\n")
    if not data.startswith(b"WARC/") or head_end < 0:
        return False
    length = _content_length(data, head_end)
    return length is not None and len(data) >= head_end + 4 + length + 4 and \
        data[head_end + 4 + length:head_end + 4 + length + 4] == b"\r\n\r\n"


def complete_prefix(path: str | os.PathLike, chunk: int = 1 << 20) -> int:
    """Bytes at the start of the WARC file ``path`` that hold only complete records.

    A ``.gz`` file is read as one gzip member per record (how WARC writers compress); a member that never
    ends, or whose record is shorter than its ``Content-Length``, ends the complete prefix. An uncompressed
    file is read record by record from the ``Content-Length`` of each header.
    """
    p = Path(path)
    if p.name.endswith(".gz"):
        return _gzip_prefix(p, chunk)
    return _plain_prefix(p, chunk)


def _gzip_prefix(p: Path, chunk: int) -> int:
    good = 0  # end of the last complete member
    pending = b""  # compressed bytes read past the end of the last member
    with open(p, "rb") as f:
        while True:
            data = pending or f.read(chunk)
            if not data:
                return good
            d = zlib.decompressobj(31)
            out = bytearray()
            consumed = 0
            while True:
                try:
                    out += d.decompress(data)
                except zlib.error:
                    return good
                if d.eof:
                    pending = d.unused_data
                    consumed += len(data) - len(pending)
                    break
                consumed += len(data)
                data = f.read(chunk)
                if not data:
                    return good  # the member never ends: cut mid-record
            if not _record_complete(bytes(out)):
                return good
            good += consumed


def _plain_prefix(p: Path, chunk: int) -> int:
    size = p.stat().st_size
    good = 0
    with open(p, "rb") as f:
        while good < size:
            f.seek(good)
            head = b""
            while b"\r\n\r\n" not in head:
                more = f.read(min(chunk, 65536))
                if not more:
                    return good
                head += more
            head_end = head.index(b"\r\n\r\n")
            length = _content_length(head, head_end)
            if not head.startswith(b"WARC/") or length is None:
                return good
            end = good + head_end + 4 + length + 4
            if end > size:
                return good
            f.seek(end - 4)
            if f.read(4) != b"\r\n\r\n":
                return good
            good = end
    return good


# ---------------------------------------------------------------------- reading
def _iter_records(path: str | os.PathLike) -> Iterator[Any]:
    try:
        from warcio.archiveiterator import ArchiveIterator
    except ImportError:  # pragma: no cover
        raise ImportError(f"reading WARC files needs warcio: {install_command('web')}") from None
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such WARC file")
    with open(p, "rb") as f:
        yield from ArchiveIterator(f)


def _json_payload(rec: Any, path: Path) -> dict[str, Any] | None:
    ctype = (rec.rec_headers.get_header("Content-Type") or "").split(";")[0].strip().lower()
    if ctype != _JSON:
        return None
    raw = rec.content_stream().read()
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        rid = rec.rec_headers.get_header("WARC-Record-ID")
        raise ValueError(f"{path}: metadata record {rid} holds invalid JSON ({e})") from None
    return obj if isinstance(obj, dict) else None


def read_fetches(path: str | os.PathLike) -> Iterator[FetchResult]:
    """Every :class:`FetchResult` recorded in the WARC file ``path``, in crawl order.

    Each comes from a fetch metadata record; the body (for a result without error) is the payload of the
    response record its ``WARC-Refers-To`` names. ``exchanges`` is left empty.
    """
    p = Path(path)
    bodies: dict[str, bytes] = {}
    for rec in _iter_records(p):
        if rec.rec_type == "response":
            rid = rec.rec_headers.get_header("WARC-Record-ID")
            bodies[rid] = rec.raw_stream.read()  # the payload as stored (content_stream would decode a coding kept)
        elif rec.rec_type == "metadata":
            obj = _json_payload(rec, p)
            if obj is None or obj.get("kind") != "fetch":
                continue
            meta = obj["result"]
            body = b""
            if meta.get("error") is None:
                ref = rec.rec_headers.get_header("WARC-Refers-To")
                if ref not in bodies:
                    raise ValueError(f"{p}: fetch of {meta.get('url')!r} refers to response record {ref}, "
                                     "which is not in the file before it")
                body = bodies[ref]
            bodies.clear()
            yield FetchResult.from_metadata(meta, body)


def read_decisions(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Every decision :meth:`WarcRecorder.write_decision` recorded in ``path``, in order."""
    p = Path(path)
    for rec in _iter_records(p):
        if rec.rec_type == "metadata":
            obj = _json_payload(rec, p)
            if obj is not None and obj.get("kind") == "decision":
                yield obj["decision"]


def records_fastwarc(path: str | os.PathLike) -> tuple[list[tuple[str, str, str, int, str]], str | None]:
    """Every record FastWARC reads from ``path`` as ``(type, record id, target URI, block length, SHA-1 of the
    block)``, in order, and the error that stopped it (``None`` when it read to the end) — the reader of the
    WARC compiler."""
    from fastwarc.warc import ArchiveIterator

    out: list[tuple[str, str, str, int, str]] = []
    try:
        for rec in ArchiveIterator(str(path), parse_http=False):
            block = rec.reader.read()
            h = rec.headers
            kind = str(rec.record_type).rsplit(".", 1)[-1]
            out.append((kind, h.get("WARC-Record-ID") or "", h.get("WARC-Target-URI") or "", len(block),
                        hashlib.sha1(block).hexdigest()))
    except Exception as e:  # noqa: BLE001 - whatever stops the reader is the answer
        return out, f"{type(e).__name__}: {e}"
    return out, None


def records_warcio(path: str | os.PathLike) -> tuple[list[tuple[str, str, str, int, str]], str | None]:
    """:func:`records_fastwarc`, read by warcio (the reader of replays and resumes)."""
    from warcio.archiveiterator import ArchiveIterator

    out: list[tuple[str, str, str, int, str]] = []
    try:
        with open(path, "rb") as f:
            for rec in ArchiveIterator(f, no_record_parse=True, check_digests=False):
                block = rec.raw_stream.read()
                h = rec.rec_headers
                out.append((rec.rec_type, h.get_header("WARC-Record-ID") or "", h.get_header("WARC-Target-URI") or "",
                            len(block), hashlib.sha1(block).hexdigest()))
    except Exception as e:  # noqa: BLE001
        return out, f"{type(e).__name__}: {e}"
    return out, None


def readers_disagree(path: str | os.PathLike) -> str | None:
    """Where FastWARC (the compiler's reader) and warcio (the replay's) read ``path`` differently — a record one
    reads and the other does not, or reads with another type, id, target or block — as one line; ``None``
    when they read the same records."""
    a, ea = records_fastwarc(path)
    b, eb = records_warcio(path)
    for i, (x, y) in enumerate(zip(a, b)):
        if (x[0].lower(), *x[1:]) != (y[0].lower(), *y[1:]):
            return f"{path}: record {i} differs: FastWARC {x[:4]} vs warcio {y[:4]}"
    if len(a) != len(b):
        return (f"{path}: FastWARC read {len(a)} records ({ea or 'to the end'}), warcio {len(b)} "
                f"({eb or 'to the end'})")
    return None


def read_first_warcinfo(path: str | os.PathLike) -> dict[str, Any]:
    """The fields of the warcinfo record that starts the WARC file ``path`` (what a recorder writes first),
    reading nothing after it, so a damaged tail does not matter. ``ValueError`` naming the file, in one line,
    when it is empty, is not a WARC file or does not start with a warcinfo record."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: no such WARC file")
    if p.stat().st_size == 0:
        raise ValueError(f"{p}: the WARC file is empty")
    try:
        rec = next(iter(_iter_records(p)), None)
        if rec is None or rec.rec_type != "warcinfo":
            kind = "nothing" if rec is None else f"a {rec.rec_type} record"
            raise ValueError(f"{p}: does not start with a warcinfo record (found {kind}); not a WARC this package "
                             "wrote")
        return _warcinfo_fields(rec)
    except ValueError:
        raise
    except Exception as e:  # noqa: BLE001 - warcio's errors on foreign bytes (ArchiveLoadFailed, zlib, EOF ...)
        raise ValueError(f"{p}: not a readable WARC file ({type(e).__name__}); refusing to use it") from None


def _warcinfo_fields(rec: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for line in rec.content_stream().read().decode("utf-8", errors="replace").splitlines():
        k, sep, v = line.partition(":")
        if sep:
            fields[k.strip()] = v.strip()
    for k in ("gym-crawl-policy", "gym-crawl-seeds"):
        if k in fields:
            try:
                fields[k] = json.loads(fields[k])
            except ValueError:
                raise ValueError(f"warcinfo field {k} is not valid JSON") from None
    return fields


def read_metadata(path: str | os.PathLike, kind: str) -> Iterator[dict[str, Any]]:
    """Every payload :meth:`WarcRecorder.write_metadata` recorded with ``kind`` in ``path``, in order."""
    p = Path(path)
    for rec in _iter_records(p):
        if rec.rec_type == "metadata":
            obj = _json_payload(rec, p)
            if obj is not None and obj.get("kind") == kind and isinstance(obj.get(kind), dict):
                yield obj[kind]


def read_warcinfo(path: str | os.PathLike) -> list[dict[str, Any]]:
    """The fields of every warcinfo record in ``path`` (one dict per record; a resumed file has several).
    ``gym-crawl-policy`` and ``gym-crawl-seeds`` are decoded from JSON."""
    out = []
    for rec in _iter_records(path):
        if rec.rec_type == "warcinfo":
            out.append(_warcinfo_fields(rec))
    return out
