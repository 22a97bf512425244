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

import io
import json
import os
import threading
import zlib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from gym_crawl.web.policy import FetchPolicy, default_user_agent
from gym_crawl.web.result import Exchange, FetchResult

__all__ = ["WarcRecorder", "complete_prefix", "read_decisions", "read_fetches", "read_metadata", "read_warcinfo"]

WARC_VERSION = "WARC/1.1"
_JSON = "application/json"
_ENCODING_HEADERS = ("transfer-encoding", "content-encoding")


def _warcio() -> Any:
    try:
        import warcio  # noqa: F401
        from warcio.statusandheaders import StatusAndHeaders
        from warcio.warcwriter import WARCWriter
    except ImportError:  # pragma: no cover - warcio comes with the web extra
        raise ImportError("WARC recording needs warcio: pip install 'gym-crawl[web]'") from None
    return WARCWriter, StatusAndHeaders


def recorded_headers(headers: Sequence[tuple[str, str]], body_length: int) -> list[tuple[str, str]]:
    """Response headers as stored beside a content-decoded body (see the module docstring)."""
    out: list[tuple[str, str]] = []
    lengths = [v for k, v in headers if k.lower() == "content-length"]
    changed = any(k.lower() in _ENCODING_HEADERS for k, _ in headers) or \
        (bool(lengths) and lengths[0].strip() != str(body_length))
    for k, v in headers:
        lk = k.lower()
        if lk in _ENCODING_HEADERS:
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
        new one; a missing file is created.
    :param overwrite: replace an existing file when ``append`` is false (otherwise that is a
        ``FileExistsError``, so a finished crawl is never lost to a rerun).
    :param policy: the crawl's :class:`FetchPolicy`, recorded in the warcinfo record.
    :param seeds: the crawl's seed URLs, recorded in the warcinfo record.
    :param info: further warcinfo fields (``name: value``).
    :param fsync: also ``os.fsync`` after each fetch (durable against power loss, slower).

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
        resumed = append and self.path.exists()
        if resumed:
            size = self.path.stat().st_size
            good = complete_prefix(self.path)
            if good < size:
                os.truncate(self.path, good)
                self.truncated_bytes = size - good
            self._file = open(self.path, "ab")  # noqa: SIM115 - open for the recorder's lifetime
        else:
            if self.path.exists() and not overwrite:
                raise FileExistsError(f"{self.path}: WARC file exists; pass append=True to resume it or "
                                      "overwrite=True to replace it")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(self.path, "wb")  # noqa: SIM115 - open for the recorder's lifetime
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
            req_http = self._SAH(f"{ex.method} {target} {ex.http_version}", list(ex.request_headers),
                                 is_http_request=True)
            req = w.create_warc_record(ex.url, "request", payload=io.BytesIO(b""), length=0, http_headers=req_http,
                                       warc_headers_dict={"WARC-Date": ex.started_at})
            req_id = req.rec_headers.get_header("WARC-Record-ID")
            w.write_record(req)
            self._request_ids[id(ex)] = req_id
            if ex.status is None:
                return
            http = self._SAH(f"{ex.status} {ex.reason}".rstrip(), recorded_headers(ex.headers, len(ex.body)),
                             protocol=ex.http_version)
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
        uri = result.final_url or _uri_or_urn(result.url, "fetch")
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
        uri = url if isinstance(url, str) and url else "urn:gym-crawl:decision"
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


def _uri_or_urn(url: str, kind: str) -> str:
    return url if isinstance(url, str) and "://" in url and not any(c.isspace() for c in url) else \
        f"urn:gym-crawl:{kind}"


# ---------------------------------------------------------------------- repair
def _record_complete(data: bytes) -> bool:
    """Whether ``data`` (one uncompressed record) is a whole WARC record."""
    head_end = data.find(b"\r\n\r\n")
    if not data.startswith(b"WARC/") or head_end < 0:
        return False
    length = None
    for line in data[:head_end].split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            try:
                length = int(v.strip())
            except ValueError:
                return False
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
            length = None
            for line in head[:head_end].split(b"\r\n")[1:]:
                k, _, v = line.partition(b":")
                if k.strip().lower() == b"content-length":
                    try:
                        length = int(v.strip())
                    except ValueError:
                        return good
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
        raise ImportError("reading WARC files needs warcio: pip install 'gym-crawl[web]'") from None
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
            bodies[rid] = rec.content_stream().read()
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
        if rec.rec_type != "warcinfo":
            continue
        fields: dict[str, Any] = {}
        for line in rec.content_stream().read().decode("utf-8", errors="replace").splitlines():
            k, sep, v = line.partition(":")
            if sep:
                fields[k.strip()] = v.strip()
        for k in ("gym-crawl-policy", "gym-crawl-seeds"):
            if k in fields:
                fields[k] = json.loads(fields[k])
        out.append(fields)
    return out
