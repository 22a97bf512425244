"""Compile WARC web archives (``.warc``, ``.warc.gz``) into a :class:`~gym_crawl.corpus.core.Corpus`.

``load_warc("crawl.warc.gz")``, a folder of WARC files or a glob (``"crawl/*.warc.gz"``); also
``load_corpus(path)`` and :func:`load_warc`. What becomes of each record:

* **pages** — ``response`` records with an HTTP 2xx status and an HTML content type (``text/html``,
  ``application/xhtml+xml``; ``html_types=`` to change; a body sent without ``Content-Type`` that starts as
  HTML, as the live fetcher decides, :func:`~gym_crawl.web.result.looks_like_html`) go through
  :func:`~gym_crawl.web.html_extract.extract_page` (the same extractor as the live crawler; the compiler reads it
  through :func:`~gym_crawl.web.html_extract.extract_page_spans`, which gives the same fields with the link texts as
  spans):

  - **url** (the corpus' ``urls`` table, :meth:`Corpus.url`) is the page's canonical URL
    (:func:`~gym_crawl.web.urls.canonical_url`); ``corpus.page_id(url)`` finds the page, so seeds may be
    URLs;
  - **title** is the HTML ``<title>`` (white space collapsed; the URL when there is none); a title that
    several pages share gets their URL appended (``"Index (https://a.org/x/)"``) so titles stay unique;
  - **title/URL tokens** (``title_terms``) are the words of the URL
    (:func:`~gym_crawl.web.urls.url_text`) — what a crawler knows of a page before fetching it, never
    its content;
  - **text** (bag of words and the kept ``texts`` entry) is the main text (boilerplate removed);
  - **domain** is :func:`~gym_crawl.web.urls.url_host` (``host`` or ``host:port``);
  - **links** keep the extractor's anchor text and 150-character surrounding text; a link counts once per
    (source, target) pair (the first), links to the page itself are dropped.

* **redirects** — a 3xx ``response`` with a ``Location`` header maps its URL to the target, so a link to the
  redirecting URL points to the final page (chains followed up to :data:`MAX_REDIRECT_HOPS`; loops and
  chains ending outside the archive leave the link unresolved).
* **duplicates** — the first record of a URL wins (files in sorted path order, records in file order); a
  page whose payload digest (``WARC-Payload-Digest``, else the SHA-1 of the payload) equals an earlier
  page's is merged into it: its URL becomes an alias of the first page.
* **skipped** and counted in ``corpus.meta["warc_summary"]["skipped"]`` (printed by ``gym-crawl corpus
  info``): ``request``, ``metadata``, ``warcinfo``, ``resource``, other record types; ``revisit`` records;
  ``non_html`` content; ``http_error`` (status ≥ 400 or 1xx); ``redirect_without_location``;
  ``truncated`` records (``WARC-Truncated`` header, or a block shorter than its ``Content-Length``);
  ``broken`` records (no target URI, unparseable HTTP headers or URL, a chunked or gzip/deflate body
  that does not decode, another content encoding); ``too_large`` records (over
  ``max_record_bytes``); ``empty`` payloads; ``unreadable`` — the rest of a file after a record that
  cannot be parsed (the records before it are kept; the file is listed in ``unreadable_files``).
* **links to URLs not in the archive** are dropped, unless ``include_unfetched=True``: each such URL then
  becomes a text-less page (ids after every fetched page, in order of first link;
  ``meta["unfetched_pages"] = {"first": id, "count": n}``).
* **labels** — ``labels=`` URL → label(s) (a dict, a JSON, CSV or TSV file); ``label_rules=`` URL-prefix rules
  (the longest matching prefix wins) and ``re:`` regular expressions, a list of ``(rule, label)`` pairs or a JSON
  or TSV file (:mod:`gym_crawl.web.warc_labels`). URLs and prefixes are canonicalised. Without labels, a topic is
  given by words (``topic="plate tectonics"``) and seed URLs.
* **pages fetched after a crawl's last step** — a live crawl of this package names the pages still on the wire
  when its last step was taken in an ``after_last_step`` metadata record: they are compiled (their responses are
  in the file) and their ids listed in ``corpus.meta["fetched_after_last_step"]``, as the crawl's summary counts
  them (``after_last_step``).
* **seeds** — the seed URLs a crawl of this package recorded in its warcinfo record (``gym-crawl-seeds``) that
  are pages of the corpus, in ``corpus.meta["default_seeds"]`` (the crawl's own start pages: the default seeds of a
  topic on this corpus).

How it runs: each WARC file — or each segment of about ``segment_bytes`` of it, cut at record boundaries
(:mod:`gym_crawl.web.warc_tasks`) — is read record by record (FastWARC) by :func:`parse_warc_file` into on-disk
shard chunks of at most ``chunk_pages`` pages (``.npz``, written atomically, with a local vocabulary), so
no process ever holds a whole file; files and segments are parsed in parallel over ``workers`` processes
(``engine="process"``) or on a Dask cluster (``engine="dask"``, the same function through
``Client.map``), with a progress bar over the bytes parsed (``progress=``). The global join — which record is
the page of a URL, digest duplicates, redirects — is computed in the calling process from sorted arrays of the
records' 64-bit URL hashes, into a lookup table as long as the pages; the assembly then reads the chunks once
more, one at a time, resolves each chunk's links through that table and appends every column to the corpus'
memory-mapped files, in a folder renamed into place only when whole (both in :mod:`gym_crawl.web.warc_build`;
:class:`~gym_crawl.corpus.writer.CorpusWriter`). Memory follows the pages, never the links; both engines give
the same corpus.
"""
from __future__ import annotations

import base64
import glob as _glob
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gym_crawl.corpus.core import Corpus, CorpusFormatError, StringTable
from gym_crawl.web.html_extract import LINK_POSITIONS, ExtractedPage, PageSpans, extract_page_spans
from gym_crawl.web.result import header_text, looks_like_html
from gym_crawl.web.token_ids import ChunkVocabulary, split_texts
from gym_crawl.web.urls import canonical_url, url_text
from gym_crawl.web.warc_build import MAX_REDIRECT_HOPS, Join, join_pages, load_keys, write_corpus
from gym_crawl.web.warc_labels import read_label_map, read_label_rules
from gym_crawl.web.warc_tasks import SEGMENT_BYTES, ParseTask, merge_segments, plan_tasks, run_dask, run_processes

__all__ = ["HTML_TYPES", "MAX_REDIRECT_HOPS", "SKIP_REASONS", "WarcOptions", "load_warc",
           "parse_warc_file", "warc_files"]

WARC_SUFFIXES = (".warc", ".warc.gz")
HTML_TYPES = ("text/html", "application/xhtml+xml")
"""Content types compiled into pages by default."""
SKIP_REASONS = ("request", "metadata", "warcinfo", "resource", "other_record", "revisit", "non_html",
                "http_error", "redirect_without_location", "truncated", "broken", "too_large", "empty",
                "unreadable")
"""Every reason a record is not compiled into a page (the keys of ``warc_summary["skipped"]``)."""
BROKEN_EXAMPLES = 5
"""``broken`` records named, with why, per file in ``warc_summary["broken_examples"]``."""


@dataclass(frozen=True)
class WarcOptions:
    """What :func:`parse_warc_file` needs besides the file.

    :param html_types: content types (without parameters, lowercase) compiled into pages
    :param max_record_bytes: records with a larger block are skipped (``too_large``) without being read
    :param chunk_pages: pages buffered before a shard chunk is written (bounds a worker's memory)
    :param chunk_links: links buffered before a shard chunk is written (a page's links stay in one chunk): pages of
        thousands of links (generated API references) would otherwise make a chunk of 2,000 pages hold 400,000
    """

    html_types: tuple[str, ...] = HTML_TYPES
    max_record_bytes: int = 20 << 20
    chunk_pages: int = 2000
    chunk_links: int = 50_000


# ------------------------------------------------------------------------------------------ inputs

def _is_warc_name(p: Path) -> bool:
    return p.name.lower().endswith(WARC_SUFFIXES)


def warc_files(spec: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Path]:
    """The WARC files named by ``spec``: a file, a folder (its ``*.warc`` / ``*.warc.gz`` files at any
    depth), a glob, or a list of these — sorted by path, duplicates removed. Raises ``FileNotFoundError``
    naming the spec when nothing matches."""
    specs = [spec] if isinstance(spec, (str, os.PathLike)) else list(spec)
    if not specs:
        raise ValueError("no WARC path given")
    out: set[Path] = set()
    for s in specs:
        p = Path(os.fspath(s)).expanduser()
        if any(c in str(p) for c in "*?["):
            found = [Path(m) for m in _glob.glob(str(p), recursive=True) if _is_warc_name(Path(m))]
        elif p.is_dir():
            found = [f for f in p.rglob("*") if f.is_file() and _is_warc_name(f)]
        elif p.is_file():
            found = [p]
        else:
            raise FileNotFoundError(f"WARC path {os.fspath(s)!r}: no such file or folder")
        if not found:
            raise FileNotFoundError(f"WARC path {os.fspath(s)!r}: no .warc or .warc.gz file found")
        out.update(f.resolve() for f in found)
    return sorted(out)


# ----------------------------------------------------------------------------------- parse one file

def _hash64(s: str) -> int:
    return int.from_bytes(hashlib.blake2b(s.encode("utf-8"), digest_size=8).digest(), "little", signed=True)


def _sha1_digest(payload: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")


def _strings(prefix: str, values: list[str]) -> dict[str, np.ndarray]:
    t = StringTable.from_strings(values)
    return {f"{prefix}_blob": t.blob, f"{prefix}_off": t.offsets}


def _split_tokens(ids: list[np.ndarray], counts: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    """``(url_ptr, url_terms, anchor_ptr, anchor_terms, context_ptr, context_terms)`` (CSR, ``int64`` pointers and
    ``int32`` ids) from each page's token ids and its texts' token counts (its text, its URL, then each link's anchor
    and context)."""
    if not counts:
        empty_ptr, empty = np.zeros(1, np.int64), np.zeros(0, np.int32)
        return empty_ptr, empty, empty_ptr.copy(), empty.copy(), empty_ptr.copy(), empty.copy()
    c = np.concatenate(counts)
    first = np.cumsum([0] + [len(k) for k in counts[:-1]], dtype=np.int64)
    pos = np.arange(c.shape[0], dtype=np.int64) - np.repeat(first, [len(k) for k in counts])  # place on its page
    kind = np.where(pos < 2, pos, 2 + (pos & 1))  # 0 text, 1 URL, 2 anchor, 3 context
    all_ids = np.concatenate(ids, dtype=np.int32)
    out: list[np.ndarray] = []
    for k in (1, 2, 3):
        out += split_texts(all_ids, c, kind, k)
    return tuple(out)


_POSITION_CODE = {p: i for i, p in enumerate(LINK_POSITIONS)}


class _ChunkWriter:
    """Buffers the pages and redirects of one WARC file and writes them as ``.npz`` chunks."""

    def __init__(self, out_dir: Path, stem: str, chunk_pages: int, chunk_links: int = WarcOptions.chunk_links) -> None:
        self.out_dir, self.stem, self.chunk_pages, self.chunk_links = out_dir, stem, chunk_pages, chunk_links
        self.chunks: list[dict[str, Any]] = []
        self.fallbacks = 0
        """Pages extracted with the bounded fallback (:attr:`ExtractedPage.fallback`)."""
        self._reset()

    def _reset(self) -> None:
        self.vocab = ChunkVocabulary()
        self.urls: list[str] = []
        self.titles: list[str] = []
        self.url_hash: list[int] = []
        self.digest_hash: list[int] = []
        self.texts: list[str] = []
        self.bag_terms: list[np.ndarray] = []
        self.bag_counts: list[np.ndarray] = []
        self.token_ids: list[np.ndarray] = []
        self.token_counts: list[np.ndarray] = []  # per page: its text's, URL's, then each link's anchor's and context's
        self.link_n: list[int] = []
        self.link_urls: list[str] = []
        self.link_hash: list[int] = []
        self.position: list[int] = []
        self.redirects: list[tuple[int, int]] = []
        self._hashes: dict[str, int] = {}  # link targets' hashes (a site's menu links are the same on every page)

    def add_page(self, url: str, digest: str, page: ExtractedPage | PageSpans) -> None:
        self.urls.append(url)
        self.titles.append(page.title)
        self.url_hash.append(_hash64(url))
        self.digest_hash.append(_hash64(digest))
        self.texts.append(page.text)
        hashes = self._hashes
        if isinstance(page, PageSpans):
            targets = page.urls
            self.position.extend(page.positions.tolist())
            # in this order (the ids are numbered as they appear): text, URL, each link's anchor and context
            ids, counts, terms, tally = self.vocab.span_ids([page.text, url_text(url)], page.chars, page.spans,
                                                            page.owners)
        else:
            targets = [link.url for link in page.links]
            texts = [page.text, url_text(url)]
            for link in page.links:
                texts += (link.anchor, link.context)
                self.position.append(_POSITION_CODE[link.position])
            ids, counts, terms, tally = self.vocab.ids(texts)
        self.link_urls += targets
        for target in targets:
            h = hashes.get(target)
            if h is None:
                h = hashes[target] = _hash64(target)
            self.link_hash.append(h)
        self.link_n.append(len(targets))
        self.token_ids.append(ids)
        self.token_counts.append(counts)
        self.bag_terms.append(terms)
        self.bag_counts.append(tally)
        if len(self.urls) >= self.chunk_pages or len(self.link_hash) >= self.chunk_links:
            self.flush()

    def add_redirect(self, src: str, dst: str) -> None:
        self.redirects.append((_hash64(src), _hash64(dst)))

    def flush(self) -> None:
        if self.urls or self.redirects:
            self._write_chunk()

    def _write_chunk(self) -> None:
        n = len(self.urls)
        text_ptr = np.zeros(n + 1, np.int64)
        np.cumsum([len(t) for t in self.bag_terms], out=text_ptr[1:])
        text_terms = np.concatenate(self.bag_terms, dtype=np.int32) if n else np.zeros(0, np.int32)
        text_counts = np.concatenate(self.bag_counts, dtype=np.int32) if n else np.zeros(0, np.int32)
        url_ptr, url_terms, anchor_ptr, anchor_terms, context_ptr, context_terms = _split_tokens(
            self.token_ids, self.token_counts)
        link_ptr = np.zeros(n + 1, np.int64)
        link_ptr[1:] = np.cumsum(self.link_n, dtype=np.int64)
        vocab = self.vocab.words()
        red = np.asarray(self.redirects, np.int64).reshape(-1, 2)
        arrays = {
            "url_hash": np.asarray(self.url_hash, np.int64), "digest_hash": np.asarray(self.digest_hash, np.int64),
            "text_ptr": text_ptr,
            "text_terms": text_terms, "text_counts": text_counts,
            "url_ptr": url_ptr, "url_terms": url_terms, "link_ptr": link_ptr,
            "link_hash": np.asarray(self.link_hash, np.int64), "anchor_ptr": anchor_ptr, "anchor_terms": anchor_terms,
            "context_ptr": context_ptr, "context_terms": context_terms,
            "position": np.asarray(self.position, np.int8),
            "redirect_from": red[:, 0].copy(), "redirect_to": red[:, 1].copy(),
            **_strings("urls", self.urls), **_strings("titles", self.titles), **_strings("texts", self.texts),
            **_strings("link_urls", self.link_urls),
            **_strings("vocab", vocab),
        }
        path = self.out_dir / f"{self.stem}.{len(self.chunks):05d}.npz"
        tmp = path.with_name(path.name + ".tmp")
        try:
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
        except OSError as e:  # a full disk: name the file (a write to an open file names none), leave no part
            tmp.unlink(missing_ok=True)
            if e.filename is None and e.errno is not None:
                raise OSError(e.errno, e.strerror or str(e), str(path)) from e
            raise
        os.replace(tmp, path)
        self.chunks.append({"path": str(path), "pages": n, "links": len(self.link_hash),
                            "redirects": len(self.redirects)})
        self._reset()


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def parse_warc_file(path: str | os.PathLike, out_dir: str | os.PathLike, index: int = 0,
                    options: WarcOptions | None = None, start: int = 0, end: int | None = None) -> dict[str, Any]:
    """Read one WARC file (or its bytes ``[start, end)``, which must begin at a record boundary:
    :func:`~gym_crawl.web.warc_tasks.split_ranges`) record by record and write its pages as shard chunks into
    ``out_dir``.

    Returns ``{"file", "index", "chunks": [{"path", "pages", "links", "redirects"}], "skipped": {reason:
    count}, "records", "unreadable", "broken": [[uri, why], ...], "extract_fallback", "seeds"}`` (JSON-serialisable;
    ``seeds``: the canonical seed URLs the file's warcinfo records name, :func:`_recorded_seeds`;
    ``extract_fallback`` counts the pages :func:`~gym_crawl.web.html_extract.extract_page` read with its
    bounded fallback; ``not_in_crawl_seen``: whether an ``after_last_step`` record of ours was read). ``index``
    orders this file (or range) among the others (its chunks are named after it). Memory: one record plus at most
    ``options.chunk_pages`` extracted pages and their links (about ``options.chunk_links``).
    """
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    from gym_crawl.web.warc_tasks import RangeReader, release_free_heap

    opts = options or WarcOptions()
    path = Path(path)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    writer = _ChunkWriter(out, f"{index:06d}", opts.chunk_pages, opts.chunk_links)
    skipped: Counter = Counter()
    broken: list[list[str]] = []
    records = 0
    unreadable: str | None = None
    names = {int(WarcRecordType.request): "request", int(WarcRecordType.metadata): "metadata",
             int(WarcRecordType.warcinfo): "warcinfo", int(WarcRecordType.resource): "resource",
             int(WarcRecordType.revisit): "revisit"}
    response, warcinfo = int(WarcRecordType.response), int(WarcRecordType.warcinfo)
    seeds: list[str] = []
    not_in_crawl: list[str] = []
    not_in_crawl_seen = False
    metadata = int(WarcRecordType.metadata)
    ranged = start > 0 or end is not None
    stream = RangeReader(path, start, end if end is not None else path.stat().st_size) if ranged else None
    source: Any = stream if stream is not None else str(path)  # FastWARC reads any object with read() and tell()
    it = iter(ArchiveIterator(source, parse_http=False))
    while True:
        try:
            rec = next(it)
        except StopIteration:
            break
        except (OSError, ValueError, RuntimeError) as e:
            unreadable = f"{type(e).__name__}: {e}"
            skipped["unreadable"] += 1
            break
        records += 1
        rtype = int(rec.record_type)
        if rtype != response:
            skipped[names.get(rtype, "other_record")] += 1
            if rtype == warcinfo:
                seeds.extend(s for s in _recorded_seeds(rec) if s not in seeds)
            elif rtype == metadata and rec.headers.get("WARC-Target-URI") == _AFTER_LAST_STEP_URI:
                not_in_crawl = _not_in_crawl(rec, not_in_crawl)
                not_in_crawl_seen = True
            continue
        try:
            reason = _read_response(rec, opts, writer, broken)
        except (OSError, ValueError, RuntimeError) as e:  # the record's bytes do not decompress: the file ends here
            unreadable = f"{type(e).__name__}: {e}"
            skipped["unreadable"] += 1
            break
        if reason is not None:
            skipped[reason] += 1
    if stream is not None:
        stream.close()
    writer.flush()
    release_free_heap()  # the chunks' freed buffers would stay in the process, scattered through its heap
    return {"file": str(path), "index": index, "chunks": writer.chunks, "skipped": dict(skipped),
            "records": records, "unreadable": unreadable, "broken": broken, "extract_fallback": writer.fallbacks,
            "seeds": seeds, "not_in_crawl": not_in_crawl, "not_in_crawl_seen": not_in_crawl_seen}


_AFTER_LAST_STEP_URI = "urn:gym-crawl:after_last_step"
"""The target URI of the metadata record a live crawl of this package writes when it closes, naming the pages it
fetched after its last step (:data:`gym_crawl.web.feed.AFTER_LAST_STEP_KIND`)."""


def _not_in_crawl(rec: Any, current: list[str]) -> list[str]:
    """The ``not_in_crawl`` URLs of an ``after_last_step`` record (each such record holds them all, so the last
    one read wins); ``current`` when the record is not one of ours."""
    try:
        d = json.loads(rec.reader.read(1 << 24))
        urls = d["after_last_step"]["not_in_crawl"]
    except (OSError, ValueError, RuntimeError, KeyError, TypeError):
        return current
    return [u for u in urls if isinstance(u, str)] if isinstance(urls, list) else current


def _recorded_seeds(rec: Any) -> list[str]:
    """The seed URLs a warcinfo record of this package's crawler names (``gym-crawl-seeds: [JSON list]``),
    canonicalised; none for any other warcinfo record (or one too large or malformed to be ours)."""
    try:
        block = rec.reader.read(1 << 20)
    except (OSError, ValueError, RuntimeError):
        return []
    for line in block.decode("utf-8", errors="replace").splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == "gym-crawl-seeds" and value.strip():
            try:
                urls = json.loads(value)
            except ValueError:
                return []
            if not isinstance(urls, list):
                return []
            return [c for c in (canonical_url(u) for u in urls if isinstance(u, str)) if c is not None]
    return []


_CHUNK_SIZE = re.compile(rb"[0-9A-Fa-f]{1,16}")


def _dechunk(data: bytes) -> bytes:
    """The body of a ``Transfer-Encoding: chunked`` payload. ``ValueError`` naming the byte offset when it
    is malformed: a size that is not hexadecimal digits (``-6``, garbage), a chunk longer than the data
    left, a chunk not followed by CRLF, no last (zero-size) chunk. Every chunk moves the reader forward, so
    it ends on any input."""
    out: list[bytes] = []
    i = 0
    n = len(data)
    while True:
        j = data.find(b"\r\n", i)
        if j < 0:
            raise ValueError(f"chunked body: no chunk-size line at byte {i} (the last chunk is missing)")
        token = data[i:j].split(b";", 1)[0].strip()
        if not _CHUNK_SIZE.fullmatch(token):
            raise ValueError(f"chunked body: chunk size {token[:20]!r} at byte {i} is not a hexadecimal number")
        size = int(token, 16)
        if size == 0:
            return b"".join(out)
        start = j + 2
        if start + size + 2 > n:
            raise ValueError(f"chunked body: a chunk of {size} bytes at byte {start} runs past the end ({n} bytes)")
        if data[start + size:start + size + 2] != b"\r\n":
            raise ValueError(f"chunked body: the chunk at byte {start} is not followed by CRLF")
        out.append(data[start:start + size])
        i = start + size + 2


def _decode_body(data: bytes, http: Any, limit: int) -> bytes:
    """The payload as the server meant it: ``Transfer-Encoding: chunked`` and ``Content-Encoding`` gzip /
    deflate undone (as many WARC writers store the bytes on the wire; the live fetcher's decoder,
    :class:`~gym_crawl.web.transport.ContentDecoder`, so a stream cut short is no page here either), at most
    ``limit`` bytes decompressed. ``ValueError`` saying why when it cannot be decoded."""
    from gym_crawl.web.transport import ContentDecoder

    te = (http.get("Transfer-Encoding") or "").lower()
    if "chunked" in te:
        data = _dechunk(data)
    codings = [c.strip().lower() for c in (http.get("Content-Encoding") or "").split(",") if c.strip()]
    unknown = [c for c in codings if c not in ("gzip", "x-gzip", "deflate", "identity")]
    if unknown:  # e.g. br: not readable as HTML
        raise ValueError(f"Content-Encoding {unknown[0][:40]!r} is not one this reader undoes")
    decoder = ContentDecoder(codings)
    out = decoder.feed(data, limit)
    if decoder.over:
        raise ValueError(f"the body decompresses past {limit} bytes")
    decoder.finish()
    return out


def _read_response(rec: Any, opts: WarcOptions, writer: _ChunkWriter,
                   broken: list[list[str]] | None = None) -> str | None:
    """Compile one response record into ``writer``; the skip reason, or ``None`` when it was used. Why a
    record is ``"broken"`` is appended to ``broken`` (``[uri, why]``, the first :data:`BROKEN_EXAMPLES`)."""
    reason, why = _compile_response(rec, opts, writer)
    if why is not None and broken is not None and len(broken) < BROKEN_EXAMPLES:
        uri = (rec.headers.get("WARC-Target-URI") or "").strip()
        broken.append([uri[:200], why])
    return reason


def _compile_response(rec: Any, opts: WarcOptions, writer: _ChunkWriter) -> tuple[str | None, str | None]:
    """``(skip reason or None, why it is broken or None)`` of one response record (see :func:`_read_response`)."""
    h = rec.headers
    uri = (h.get("WARC-Target-URI") or "").strip().strip("<>")
    declared = h.get("Content-Length")
    if not uri:
        return "broken", "no WARC-Target-URI"
    if declared is None or not declared.strip().isdigit():
        return "broken", f"Content-Length {declared!r} is not a number of bytes"
    if int(declared) > opts.max_record_bytes:
        return "too_large", None
    if h.get("WARC-Truncated"):
        return "truncated", None
    rec.freeze()
    if rec.content_length < int(declared):
        return "truncated", None
    url = canonical_url(uri)
    if url is None:
        return "broken", "the target URI is not an http(s) URL"
    try:
        rec.parse_http()
    except (OSError, ValueError) as e:
        return "broken", f"unparseable HTTP headers ({e})"
    if not rec.is_http_parsed or rec.http_headers is None:
        return "broken", "unparseable HTTP headers"
    status = rec.http_headers.status_code or 0
    if 300 <= status < 400:
        loc = header_text(rec.http_headers.get("Location"))
        if not loc:
            return "redirect_without_location", None
        target = canonical_url(loc, url)
        if target is None:
            return "broken", "the Location is not an http(s) URL"
        if target != url:
            writer.add_redirect(url, target)
        return None, None
    if not 200 <= status < 300:
        return "http_error", None
    ctype = rec.http_headers.get("Content-Type")
    if ctype and _media_type(ctype) not in opts.html_types:
        return "non_html", None
    try:
        payload = _decode_body(rec.reader.read(), rec.http_headers, opts.max_record_bytes)
    except ValueError as e:
        return "broken", str(e)
    if not ctype and not looks_like_html(payload):  # no Content-Type: sniffed, as the fetcher does
        return "non_html", None
    if not payload.strip():
        return "empty", None
    digest = (h.get("WARC-Payload-Digest") or "").strip() or _sha1_digest(payload)
    page = extract_page_spans(payload, url, ctype)
    if isinstance(page, ExtractedPage) and page.fallback:
        writer.fallbacks += 1
    writer.add_page(url, digest, page)
    return None, None


# ---------------------------------------------------------------------------------------- load_warc

def load_warc(path: str | os.PathLike | Sequence[str | os.PathLike], *,
              labels: str | os.PathLike | Mapping[str, Any] | None = None,
              label_rules: str | os.PathLike | Sequence[Sequence[str]] | Mapping[str, str] | None = None,
              workers: int | None = None, include_unfetched: bool = False, engine: str = "process",
              cluster: Any = None, work_dir: str | os.PathLike | None = None, name: str | None = None,
              html_types: Sequence[str] = HTML_TYPES, max_record_bytes: int = 20 << 20,
              chunk_pages: int = 2000, chunk_links: int = 50_000, cache: bool = True,
              segment_bytes: int | None = SEGMENT_BYTES,
              progress: bool | None = None) -> Corpus:
    """Compile WARC files into a :class:`Corpus` (see the module docstring for what becomes of each record).

    :param path: a ``.warc`` / ``.warc.gz`` file, a folder of them (searched recursively), a glob, or a list
    :param labels: URL → label(s): a JSON (``{url: label | [labels]}``), CSV (``url,label…``) or TSV
        (``URL<TAB>label``) file or a dict (:func:`~gym_crawl.web.warc_labels.read_label_map`)
    :param label_rules: URL-prefix rules ``[(prefix, label), …]`` (longest prefix wins; ``"re:REGEX"`` rules
        after them) or a JSON or TSV file of them (:func:`~gym_crawl.web.warc_labels.read_label_rules`)
    :param workers: processes parsing files in parallel (``engine="process"``; default: one per segment up to
        the CPU count; ``1`` parses in this process)
    :param include_unfetched: keep links to URLs not in the archive as text-less pages
    :param engine: ``"process"`` (files parsed by local processes) or ``"dask"`` (by ``Client.map`` on a Dask
        cluster); the join and the assembly run in this process either way
    :param cluster: with ``engine="dask"``: a scheduler address or a ``distributed.Client``; ``None`` starts a
        ``LocalCluster(n_workers=2, threads_per_worker=1)`` for the call. Remote workers must see ``path``
        and ``work_dir`` at the same paths (a shared file system)
    :param work_dir: folder for the shard chunks (default: a temporary folder removed afterwards)
    :param name: corpus name (default ``"warc:<first file's name>"``)
    :param html_types: content types compiled into pages
    :param max_record_bytes: larger records are skipped (``too_large``)
    :param chunk_pages: pages per shard chunk (a parsing worker holds at most this many extracted pages)
    :param chunk_links: a shard chunk is also written once it holds this many links (a page's links are never
        split), so pages with thousands of links do not make a worker hold hundreds of thousands
    :param cache: keep the compiled corpus in the data cache (``GYM_CRAWL_DATA``, under ``warc/``) keyed on
        the files (path, size, modification time), the labels and the options that change the result, and
        re-open it memory-mapped next time instead of compiling again (it is written there column by column and
        returned memory-mapped; ``False``: written into ``work_dir``, then read into memory)
    :param segment_bytes: a file larger than this is parsed in segments of about this many bytes, each starting
        at a record boundary (:func:`~gym_crawl.web.warc_tasks.split_ranges`), so that several workers share
        one large file; ``None`` parses each file whole. The corpus is the same either way
    :param progress: a progress bar over the WARC bytes parsed (on stderr; ``None``: when it is a terminal)
    """
    files = warc_files(path)
    if engine not in ("process", "dask"):
        raise ValueError(f"engine must be 'process' or 'dask', got {engine!r}")
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive int or None, got {workers!r}")
    if chunk_pages < 1 or chunk_links < 1:
        raise ValueError(f"chunk_pages and chunk_links must be ≥ 1, got {chunk_pages!r} and {chunk_links!r}")
    if segment_bytes is not None and (not isinstance(segment_bytes, int) or segment_bytes < 1):
        raise ValueError(f"segment_bytes must be a positive int (bytes) or None, got {segment_bytes!r}")
    label_map = read_label_map(labels) if labels is not None else None
    rules = read_label_rules(label_rules) if label_rules is not None else None
    opts = WarcOptions(html_types=tuple(t.lower() for t in html_types), max_record_bytes=int(max_record_bytes),
                       chunk_pages=int(chunk_pages), chunk_links=int(chunk_links))
    corpus_name = name or f"warc:{files[0].name.split('.warc')[0]}"
    cache_path = None
    if cache:
        from gym_crawl.corpus.cache import data_dir, open_cached

        cache_path = data_dir() / "warc" / _cache_key(files, label_map, rules, include_unfetched, opts, corpus_name)
        hit = open_cached(cache_path, what=f"WARC corpus {corpus_name!r}")
        if hit is not None:
            return hit
    own_dir = work_dir is None
    wd = Path(tempfile.mkdtemp(prefix="gym_crawl_warc_")) if own_dir else Path(work_dir or ".").expanduser()
    wd.mkdir(parents=True, exist_ok=True)
    try:
        results = _parse_all(files, wd, opts, engine, workers, cluster, segment_bytes, progress)
        chunks = [c for r in sorted(results, key=lambda r: r["index"]) for c in r["chunks"]]
        skipped: Counter = Counter()
        for r in results:
            skipped.update(r["skipped"])
        if not any(c["pages"] for c in chunks):
            raise CorpusFormatError(
                f"WARC {os.fspath(path) if isinstance(path, (str, os.PathLike)) else files[0]}: no HTML page "
                f"found in {len(files)} file(s) ({sum(r['records'] for r in results)} records; skipped: "
                f"{dict(sorted(skipped.items())) or 'none'})")
        join = join_pages(load_keys(chunks))
        meta = _corpus_meta(files, results, chunks, join, skipped, engine, label_map, rules)
        return write_corpus(chunks, join, cache_path, wd, name=corpus_name, meta=meta, results=results,
                            include_unfetched=include_unfetched, label_map=label_map, rules=rules)
    finally:
        if own_dir:
            shutil.rmtree(wd, ignore_errors=True)


def _corpus_meta(files: list[Path], results: list[dict[str, Any]], chunks: list[dict[str, Any]], join: Join,
                 skipped: Counter, engine: str, label_map: dict | None, rules: list | None) -> dict[str, Any]:
    """The corpus' ``meta`` before the assembly adds its counts: ``source``, ``warc_summary``, the definitions."""
    summary: dict[str, Any] = {
        "files": len(files), "records": sum(r["records"] for r in results),
        "skipped": {k: int(skipped.get(k, 0)) for k in SKIP_REASONS},
        "duplicates": {"url": join.url_duplicates, "payload_digest": join.digest_duplicates},
        "redirects": {"records": sum(c["redirects"] for c in chunks), "used": join.redirects_used},
        "unreadable_files": {r["file"]: r["unreadable"] for r in results if r["unreadable"]},
        "broken_examples": {r["file"]: r["broken"] for r in results if r.get("broken")},
        "extract_fallback": sum(int(r.get("extract_fallback", 0)) for r in results),
        "engine": engine,
    }
    meta = {
        "source": "WARC " + ", ".join(str(f) for f in files[:5]) + (f" … ({len(files)} files)"
                                                                      if len(files) > 5 else ""),
        "warc_summary": summary,
        "title_definition": "the HTML <title> (the URL when missing; '<title> (<url>)' when several pages "
                            "share it); title tokens are the words of the page's canonical URL (host and "
                            "path parts), what a crawler knows before fetching it; corpus.urls holds the URLs",
        "text_definition": "the main text (boilerplate removed by Resiliparse's main-content extractor)",
        "domain_definition": "the URL's host (host:port for a non-default port)",
        "anchor_definition": "the link's text (or the alt text of an image inside the link)",
        "context_definition": "150 characters each side of the anchor in the page's visible text",
    }
    if rules is not None:
        meta["label_definition"] = ("URL rules (the longest matching prefix wins, then the first matching re: "
                                    "rule)" + (" and a URL map" if label_map else ""))
    elif label_map is not None:
        meta["label_definition"] = "a URL → label map"
    return meta


_COMPILER_VERSION = 7
"""Bumped when the compiled fields change meaning, so cached corpora of older code are not reused
(2: the ``link_position`` column; 3: ``%20`` kept in queries, UTF-8 ``Location`` headers, the bounded
extraction fallback; 4: ``re:`` label rules, the recorded seeds; 5: those seeds in ``meta["default_seeds"]``;
6: ``meta["fetched_after_last_step"]``; 7: the visible text and links read by the compiled HTML walk, which
differs from the walk over a parsed tree on some broken markup)."""


def _cache_key(files: list[Path], label_map: dict | None, rules: list | None, include_unfetched: bool,
               opts: WarcOptions, name: str) -> str:
    h = hashlib.sha256()
    for f in files:
        st = f.stat()
        h.update(f"{f}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    h.update(json.dumps([_COMPILER_VERSION, label_map, rules, include_unfetched, list(opts.html_types),
                        opts.max_record_bytes, name], sort_keys=True).encode())
    return h.hexdigest()[:24]


def _parse_all(files: list[Path], wd: Path, opts: WarcOptions, engine: str, workers: int | None, cluster: Any,
               segment_bytes: int | None, progress: bool | None) -> list[dict[str, Any]]:
    """Every file parsed into chunks (in segments, with a progress bar): one result per file."""
    from tqdm import tqdm

    tasks = plan_tasks(files, segment_bytes)
    with tqdm(total=sum(t.end - t.start for t in tasks), unit="B", unit_scale=True, unit_divisor=1024,
              desc=f"compiling {len(files)} WARC file(s)", disable=None if progress is None else not progress,
              leave=False) as bar:
        if engine == "dask":
            parts = run_dask(_parse_task, tasks, wd, opts, cluster, bar)
        else:
            parts = run_processes(_parse_task, tasks, wd, opts, workers, bar)
    return merge_segments(parts, BROKEN_EXAMPLES)


def _parse_task(task: ParseTask, wd: str, index: int, opts: WarcOptions) -> dict[str, Any]:
    """:func:`parse_warc_file` of one task (chunks named after ``index``, its position among the tasks)."""
    if task.whole:
        r = parse_warc_file(task.path, wd, index, opts)
    else:
        r = parse_warc_file(task.path, wd, index, opts, task.start, task.end)
    return {**r, "file_index": task.file_index}

